"""This machine: what asv records about it (GPU fields included), and how timed processes are
started on it.

asv's machine file has no GPU fields: :func:`record` adds the GPU's name, driver, CUDA version and
compute capability from ``nvidia-smi`` (asv copies them into every results file). Timed processes
start with ``PYTHONHASHSEED=0``; asv's benchmark runs and the over-C++ workers also with
address-space randomisation off (:func:`no_aslr_prefix`): each process otherwise gets its own memory
layout, which moves 100-ns calls by several percent from process to process. The paired A/B engine's
workers keep it on by default and take the median over many processes, since one fixed layout biases
a build the same way on every machine start (docs/method.md, rule 6).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import time
from functools import cache
from pathlib import Path

HASH_SEED = "0"


def gpu_info():
    """GPU fields for asv's machine file, from nvidia-smi; {} where there is no GPU (none are
    invented)."""
    if not shutil.which("nvidia-smi"):
        return {}
    query = "name,driver_version,compute_cap,memory.total,count"
    try:
        rows = (
            subprocess.run(
                ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                check=True,
                timeout=60,
            )
            .stdout.strip()
            .splitlines()
        )
        header = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=60).stdout
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"bench: nvidia-smi failed ({exc}); recording no GPU", file=sys.stderr)
        return {}
    if not rows:
        return {}
    name, driver, cc, memory, count = [field.strip() for field in rows[0].split(",")]
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", header)
    return {
        "gpu": name,
        "gpu_count": count,
        "gpu_cc": cc,
        "gpu_memory": memory,
        "driver": driver,
        "cuda_driver": cuda.group(1) if cuda else "",
    }


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def default_name(gpu):
    """asv machine name: after the GPU (``nvidia-h200``), or ``cpu-<host>`` without one."""
    if gpu:
        return re.sub(r"[^a-z0-9]+", "-", gpu["gpu"].lower()).strip("-")
    return f"cpu-{socket.gethostname()}"


def stable(info):
    """asv draws one graph per distinct set of machine fields, so a field that changes when the same
    machine restarts splits its history: a VM's kernel build tag (``Linux 6.18.44-fc-v973-gpu`` on
    one start of an H200 virtual machine, ``-fc-v1252-gpu`` on the next) and a RAM total a few pages
    short. Keep the kernel's version and the RAM in whole GiB."""
    out = dict(info)
    found = re.match(r"(\S+ \d+(?:\.\d+)*)", out.get("os") or "")
    if found:
        out["os"] = found.group(1)
    if str(out.get("ram", "")).isdigit():
        out["ram"] = f"{round(int(out['ram']) / 2**30)} GiB"
    return out


def record(name=None, gpu=None):
    """Write this machine into asv's machine file, GPU fields included (``gpu``: as
    :func:`gpu_info` found them, where it was asked already). Returns (name, info)."""
    from asv.machine import Machine, MachineCollection

    gpu = gpu_info() if gpu is None else gpu
    name = name or default_name(gpu)
    info = stable(Machine.get_defaults())
    info.update(machine=name, cpu=cpu_model(), num_cpu=str(os.cpu_count()), **gpu)
    MachineCollection.save(name, info)
    print(
        f"bench: machine {name}: "
        + ", ".join(f"{k}={v}" for k, v in info.items() if k != "machine"),
        file=sys.stderr,
    )
    return name, info


def host():
    """What a VM's restart can change under the same machine name, kept with every paired record
    (not in asv's machine file, where it would split the history): when this machine start booted
    (``boot``, from /proc/stat: two records with one ``boot`` ran on one machine start; ``boot_id``,
    the kernel's id of it, where the kernel gives one), the kernel's full release, the CPU the VM
    was given (family, model, stepping, TSC-derived bogomips, cache; a VM's model name hides it),
    its microcode and the kernel's CPU-vulnerability mitigations (indirect-branch mitigations cost
    interpreted Python more than C++). ``start`` names the machine start: the boot id, else the boot
    time (two records with one ``start`` ran on one machine start). Fields a system does not have
    are None."""
    cpu = _first_cpu()
    folder = Path("/sys/devices/system/cpu/vulnerabilities")
    mitigations = {}
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            try:
                mitigations[path.name] = path.read_text().strip()
            except OSError:
                continue
    boot, boot_id = _boot_time(), _boot_id()
    return {
        "start": boot_id or boot,
        "boot": boot,
        "boot_id": boot_id,
        "kernel": platform.release(),
        "cpu": {
            key: cpu.get(key)
            for key in ("cpu family", "model", "stepping", "bogomips", "cache size")
        },
        "microcode": cpu.get("microcode"),
        "mitigations": mitigations,
    }


def _first_cpu():
    """The first processor's fields of /proc/cpuinfo ({} where there is none)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as lines:
            for line in lines:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def _boot_id():
    """The running kernel's boot id (a UUID drawn at each boot), or None where the kernel does not
    give one. Unlike the boot time, it does not move when the wall clock is stepped after boot."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def _boot_time():
    """When the running kernel booted, as UTC 'YYYY-MM-DDTHH:MM:SSZ' (None where /proc/stat has no
    btime)."""
    try:
        with open("/proc/stat") as lines:
            seconds = next(
                (int(line.split()[1]) for line in lines if line.startswith("btime ")), None
            )
    except OSError:
        return None
    return None if seconds is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def has_gpu(info):
    return bool(info.get("gpu"))


@cache
def no_aslr_prefix():
    """``setarch <arch> -R`` where the kernel lets this process switch address-space randomisation
    off (containers' seccomp profiles often do not), else nothing. Children inherit it."""
    if not shutil.which("setarch"):
        return ()
    prefix = ("setarch", platform.machine(), "-R")
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else ()


def cores():
    """The cores this process may run on."""
    return (
        sorted(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else list(range(os.cpu_count() or 1))
    )


def cpu_affinity(choice):
    """asv's ``--cpu-affinity`` arguments for ``auto`` / ``none`` / an explicit list such as ``7``
    or ``6,7``: ``auto`` pins to the last core on machines with 4 or more, nothing on smaller
    ones."""
    if choice in (None, "none"):
        return []
    if choice == "auto":
        found = cores()
        return ["--cpu-affinity", str(found[-1])] if len(found) >= 4 else []
    return ["--cpu-affinity", choice]


def timed_env(base=None):
    """The environment of a timed process: a fixed hash seed (unless one is set)."""
    env = dict(os.environ if base is None else base)
    env["PYTHONHASHSEED"] = env.get("PYTHONHASHSEED", HASH_SEED)
    return env
