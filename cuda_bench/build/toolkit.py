"""Stage 1, build: the commands a build runs, and the CUDA toolkit it compiles against.

Every command of a build goes through :func:`run` (its output kept, a failure a
:class:`BuildError` with the output's tail); a build's own process group is registered
(:data:`CHILDREN`) so that an interrupt stops every build at once (:func:`stop_builds`,
:func:`in_builds`). :func:`cuda_home` finds the CUDA headers a commit's build needs (the version its
``ci/versions.yml`` or its cuda-bindings wheel names) locally, in the cache, or as NVIDIA's
``cuda-toolkit`` wheels from PyPI. Standard library only: this module runs inside the benchmark
environments.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from cuda_bench.foundations import process
from cuda_bench.foundations.paths import CACHE


class BuildError(Exception):
    pass


#: when this process last said a line (``time.monotonic``), asv's clock on a build step's silence:
#: how long a build stopped from outside had said nothing
LAST_OUTPUT = [time.monotonic()]


def log(message):
    print(f"[build] {message}", file=sys.stderr, flush=True)
    LAST_OUTPUT[0] = time.monotonic()


def progress(message):
    """A line worth showing while asv builds (a package starts or ends): logged, and appended to
    ``CUDA_BENCH_PROGRESS`` when set."""
    if message:
        log(message)
    path = os.environ.get("CUDA_BENCH_PROGRESS")
    if path:
        with open(path, "a") as f:
            f.write(message + "\n")


# The build processes this process started for its environments (each a process group of its own:
# the build step and the pip and compilers it runs), which an interrupt stops at once
# (:func:`stop_builds`)
CHILDREN = set()
STOPPING = []
STARTING = threading.Lock()  # a build starts, or the builds are stopped: never both at once


def stop_builds():
    """Stop every build this process runs (their process groups), and start no more: what
    ``in_builds`` does when it is interrupted, so that Ctrl-C or SIGTERM never waits minutes for a
    compile to end, and each build removes its temporary folders and half-made cache entries first
    (``process.stop_groups``)."""
    with STARTING:
        STOPPING.append(True)
    process.stop_groups(list(CHILDREN), 2 * process.GRACE + 2)


def in_builds(task, items, workers):
    """``task`` over ``items``, ``workers`` at a time in threads (builds, which run in processes of
    their own); on an interrupt or an error the builds still running are killed before it
    propagates."""
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(workers)
    try:
        futures = [pool.submit(task, item) for item in items]
        # the first failure, not the first item, ends it
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f.exception() for f in done if f.exception() is not None), None)
        if failed is not None:
            raise failed
        return [f.result() for f in futures]
    except BaseException:
        stop_builds()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        STOPPING.clear()


def run(cmd, cwd=None, env=None, own_group=False):
    """``cmd``'s output; BuildError when it fails. ``own_group``: in a process group of its own that
    dies with this process, and which an interrupt here (Ctrl-C, or SIGTERM: :func:`main`) ends
    whole, everything ``cmd`` started with it, before the interrupt goes on (only from the build
    step's main thread)."""
    log("$ " + " ".join(map(str, cmd)))
    if not own_group:
        proc = subprocess.run(
            cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        out, code = proc.stdout, proc.returncode
    else:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            preexec_fn=process.die_with_parent,
        )
        try:
            out = streamed(proc, cmd)
            code = proc.wait()
        except BaseException:
            process.stop_groups([proc], process.GRACE)
            raise
    if code != 0:
        tail = "\n".join(out.splitlines()[-40:])
        raise BuildError(f"{' '.join(map(str, cmd[:4]))} ... failed ({code}):\n{tail}")
    return out


#: seconds between two lines :func:`streamed` says on standard output while a command's output
#: grows: asv stops a build step that says nothing for ``install_timeout`` seconds
HEARTBEAT = float(os.environ.get("CUDA_BENCH_HEARTBEAT", "60"))


def streamed(proc, cmd):
    """``proc``'s output, read line by line as it comes; while it grows, a line on standard output
    at most every :data:`HEARTBEAT` seconds. asv's limit on a build (``install_timeout``) counts
    seconds without output: a compile that goes on is never taken for one that hangs, and one that
    hangs still is."""
    lines, start = [], time.monotonic()
    for line in proc.stdout:
        lines.append(line)
        now = time.monotonic()
        if now - LAST_OUTPUT[0] >= HEARTBEAT:
            said = f"{len(lines)} lines of output in {now - start:.0f} s"
            print(f"[build] {Path(cmd[-1]).name}: {said}", flush=True)
            LAST_OUTPUT[0] = now
    return "".join(lines)


def git(src, *args):
    return run(["git", *args], cwd=src).strip()


def cache_root():
    return Path(os.environ.get("CUDA_BENCH_CACHE", CACHE / "wheels"))


def pip(*args, env=None, own_group=False):
    return run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        env=env,
        own_group=own_group,
    )


def wanted_cuda(src, bindings_spec):
    """The CUDA major.minor whose headers this build needs: the bindings wheel's, or the commit's
    ci/versions.yml ``cuda.build.version`` when the bindings are built from source."""
    if bindings_spec != "source":
        return ".".join(bindings_spec.split(".")[:2])
    versions = Path(src) / "ci" / "versions.yml"
    if versions.is_file():
        m = re.search(r"build:\s*\n\s*version:\s*\"?(\d+\.\d+)", versions.read_text())
        if m:
            return m.group(1)
    return None


def toolkit_version(root):
    """'13.3' from ROOT/include/cuda.h's CUDA_VERSION (13030), or None."""
    try:
        m = re.search(
            r"#define\s+CUDA_VERSION\s+(\d+)", (Path(root) / "include" / "cuda.h").read_text()
        )
    except OSError:
        return None
    return f"{int(m.group(1)) // 1000}.{int(m.group(1)) % 1000 // 10}" if m else None


def cuda_home(src, bindings_spec):
    """CUDA headers for this build. CUDA_BENCH_CUDA_HOME wins outright. Otherwise the first of
    CUDA_HOME, CUDA_PATH, /usr/local/cuda and the cached pip headers that has NVRTC's header and is
    the wanted version; else the headers of that version from PyPI (cached); else, offline, the
    first toolkit found, with a warning (the build may then fail on declarations the bindings
    expect)."""
    forced = os.environ.get("CUDA_BENCH_CUDA_HOME")
    if forced:
        return forced
    want = wanted_cuda(src, bindings_spec)
    pip_root = cache_root().parent / f"cuda-headers-{want}"
    pip_home = pip_root / "nvidia" / f"cu{(want or '0').split('.')[0]}"
    local = [
        Path(p)
        for p in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda")
        if p
    ]
    local = [p for p in local if (p / "include" / "nvrtc.h").is_file()]
    for home in [*local, pip_home]:
        if (home / "include" / "nvrtc.h").is_file() and (
            want is None or toolkit_version(home) == want
        ):
            log(f"CUDA headers: {home} (CUDA {toolkit_version(home)})")
            return str(home)
    if want:
        try:
            # the headers (and libcudart_static.a) of one CUDA release, as NVIDIA publishes them on
            # PyPI
            pip(
                "install",
                "--target",
                str(pip_root),
                f"cuda-toolkit[cudart,crt,profiler,nvrtc,cufile]=={want}.*",
            )
            merge_components(pip_root, pip_home)
            log(f"CUDA headers: {pip_home} (CUDA {want}, from PyPI)")
            return str(pip_home)
        except BuildError as exc:
            reason = str(exc).splitlines()[0]
    else:
        reason = "the commit names no CUDA version"
    if not local:
        raise BuildError(f"no CUDA headers for CUDA {want}: {reason}; set CUDA_BENCH_CUDA_HOME")
    log(
        f"WARNING: no CUDA {want} headers ({reason}); using {local[0]} (CUDA "
        f"{toolkit_version(local[0])})"
    )
    return str(local[0])


def merge_components(pip_root, home):
    """CUDA 13's wheels share one tree (nvidia/cu13); CUDA 12's put each component in its own
    (nvidia/cuda_runtime, nvidia/cuda_nvrtc, ...): gather those into one CUDA_HOME-shaped tree."""
    if (home / "include" / "nvrtc.h").is_file():
        return
    for component in sorted((pip_root / "nvidia").glob("*")):
        for sub in ("include", "lib"):
            if (component / sub).is_dir():
                shutil.copytree(component / sub, home / sub, dirs_exist_ok=True)
    if not (home / "include" / "nvrtc.h").is_file():
        raise BuildError(f"the cuda-toolkit wheels in {pip_root} have no nvrtc.h")
