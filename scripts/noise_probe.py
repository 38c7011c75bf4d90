"""How much do 100-ns calls move from one process to the next on this machine, and what steadies them?

    python scripts/noise_probe.py [--processes 6] [--json OUT.json]
    python scripts/noise_probe.py --timeline 12 [--core N] [--json OUT.json]
    python scripts/noise_probe.py --cores 1.0 [--json OUT.json]

Runs a few of the suite's shortest calls (the harness floor, cuda.core ``Device()``, cuda.bindings
``cuCtxGetDevice``, CuPy ``Device()``) in fresh processes under each launch setting that
``scripts/bench.py`` can use (plain; address-space randomisation off with ``setarch -R``; that plus one
pinned core), with ``PYTHONHASHSEED=0`` throughout, and prints, per setting and call, the spread of the
per-process medians (``max/min - 1``). asv starts every run from a new forkserver, so this spread is the
floor of what an A/A comparison of two asv runs can show. Needs a GPU and the system's cuda.core/CuPy.

``--timeline S`` looks inside one process instead: for S seconds it times, in turn and without pause, a
batch of each call (about half a millisecond each), recording wall time and the thread's CPU time, and
reports how often a call runs at its full speed, how long the slow stretches last, whether the calls are
slow together (the ratio to the floor measured a millisecond earlier), and the time the hypervisor stole
from the core (``/proc/stat``). ``--cores S`` runs an S-second timeline pinned to each core in turn, twice,
and reports each core's median: whether some cores are steadily faster than others.
``--timeline S --write-reference MACHINE`` also records the floor's fastest sample as the machine's
``reference_ns`` in asv.conf.json: the full-speed cost that the reference clock (benchmarks/_clock.py)
scales every sample to.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

import bench

CHILD = r"""
import json, statistics, timeit
from cuda.core import Device
from cuda.bindings import driver
import cupy
Device(0).set_current()
cupy.cuda.Device(0).use()
class Harness:  # the suite's timed body: self.fn(*self.args)
    def __init__(self, fn): self.fn, self.args = fn, ()
    def time(self): self.fn(*self.args)
calls = {"floor": int, "core Device()": Device, "bindings cuCtxGetDevice": driver.cuCtxGetDevice,
         "cupy Device()": cupy.cuda.Device}
out = {}
for name, fn in calls.items():
    h = Harness(fn)
    h.time()
    samples = [timeit.timeit(h.time, number=20000) / 20000 for _ in range(15)]
    out[name] = statistics.median(samples)
print(json.dumps(out))
"""


TIMELINE_CHILD = r"""
import json, sys, time
seconds, batch, root = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, root)
from benchmarks._clock import _Body  # the reference clock's body: the floor, called as asv calls it
calls = {"floor": int}
try:
    from cuda.core import Device
    from cuda.bindings import driver
    dev = Device(0)
    dev.set_current()
    calls["core set_current"] = dev.set_current
    calls["bindings cuCtxGetDevice"] = driver.cuCtxGetDevice
except Exception as exc:  # no GPU here: the floor alone still shows the machine
    print(f"noise_probe: no GPU calls ({type(exc).__name__}: {exc})", file=sys.stderr)
timed = [_Body(fn).as_asv_calls_it("noop") for fn in calls.values()]
rows = {name: [] for name in calls}   # [start (ns from the first), wall ns per call, CPU ns per call]
wall, cpu, loop = time.perf_counter_ns, time.thread_time_ns, range(batch)
start = wall()
end = start + int(seconds * 1e9)
while wall() < end:
    for name, fn in zip(calls, timed):
        t0, c0 = wall(), cpu()
        for _ in loop:
            fn()
        c1, t1 = cpu(), wall()
        rows[name].append((t0 - start, (t1 - t0) / batch, (c1 - c0) / batch))
print(json.dumps(rows))
"""


def steal_ticks():
    """Per core: the ticks the hypervisor ran something else on it (``/proc/stat``, 8th field), if any."""
    try:
        lines = open("/proc/stat").read().splitlines()
    except OSError:
        return {}
    return {line.split()[0]: int(line.split()[8]) for line in lines
            if line.startswith("cpu") and line[3].isdigit() and len(line.split()) > 8}


def run_timeline(seconds, core, batch=2000):
    """One process pinned to ``core`` (None: not pinned) running TIMELINE_CHILD; its rows and the steal."""
    prefix = ["taskset", "-c", str(core)] if core is not None else []
    before = steal_ticks()
    proc = subprocess.run([*prefix, sys.executable, "-c", TIMELINE_CHILD, str(seconds), str(batch), str(bench.ROOT)],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED="0"))
    after = steal_ticks()
    if proc.returncode != 0:
        raise SystemExit(f"noise_probe: the timeline failed:\n{proc.stderr[-2000:]}")
    sys.stderr.write(proc.stderr)
    stolen = {cpu: after[cpu] - before.get(cpu, 0) for cpu in after if after[cpu] != before.get(cpu, 0)}
    return json.loads(proc.stdout.splitlines()[-1]), stolen


def stretches(flags):
    """Lengths of the runs of consecutive True values."""
    out, n = [], 0
    for flag in flags:
        if flag:
            n += 1
        elif n:
            out.append(n)
            n = 0
    return out + ([n] if n else [])


def describe_timeline(rows, fast=1.05):
    """Markdown lines: per call, its fastest/median/p90 per call, the share of samples within ``fast`` of
    its fastest, the longest slow stretch, CPU time against wall time, and the steadiness of the ratio to the
    floor measured just before it (a reference inside the process)."""
    lines = ["| call | samples | fastest | median | p90 | within 5% of fastest | longest slow stretch |"
             " CPU/wall at median | ratio to floor: within 5% of its lowest | ratio p90/lowest |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    floor = [w for _, w, _ in rows.get("floor", [])]
    for name, samples in rows.items():
        walls = [w for _, w, _ in samples]
        low, med = min(walls), statistics.median(walls)
        p90 = statistics.quantiles(walls, n=10)[-1]
        near = [w <= low * fast for w in walls]
        slow = stretches([not flag for flag in near])
        step_ms = samples[-1][0] / len(samples) / 1e6 if len(samples) > 1 else 0
        ratio_cpu = statistics.median(c / w for _, w, c in samples if w > 0)
        cells = [name, str(len(walls)), f"{low:.0f} ns", f"{med:.0f} ns", f"{p90:.0f} ns",
                 f"{sum(near) / len(near):.0%}", f"{max(slow, default=0) * step_ms:.0f} ms", f"{ratio_cpu:.2f}"]
        if name != "floor" and len(floor) == len(walls):
            ratios = [w / f for w, f in zip(walls, floor)]
            rlow = min(ratios)
            rp90 = statistics.quantiles(ratios, n=10)[-1]
            cells += [f"{sum(r <= rlow * fast for r in ratios) / len(ratios):.0%}", f"{rp90 / rlow:.2f}"]
        else:
            cells += ["", ""]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def timeline_main(args):
    core = args.core
    if core is None:
        auto = bench.cpu_affinity("auto")  # where scripts/bench.py pins asv: ["--cpu-affinity", N] or nothing
        core = int(auto[1]) if auto else None
    rows, stolen = run_timeline(args.timeline, core)
    where = f"core {core}" if core is not None else "not pinned"
    print(f"timeline: {args.timeline:g} s in one process, {where}; ticks stolen by the hypervisor: "
          f"{stolen or 'none'}")
    print("\n".join(describe_timeline(rows)))
    if args.write_reference:
        fastest = min(w for _, w, _ in rows["floor"])
        write_reference(bench.CONF, args.write_reference, fastest)
        print(f"reference_ns for {args.write_reference}: {fastest:.1f} (the floor's fastest sample) -> {bench.CONF}")
    return {"core": core, "stolen": stolen, "rows": rows}


def write_reference(conf_path, machine, ns):
    """Set ``reference_ns[machine]`` in asv.conf.json (a file with comments: edited as text)."""
    try:
        bench.rewrite_conf_block(conf_path, "reference_ns",
                                 lambda text: dict(sorted({**json.loads(text), machine: round(ns, 1)}.items())))
    except ValueError as exc:
        raise SystemExit(f"noise_probe: {exc}") from None


def cores_main(args):
    cores = sorted(os.sched_getaffinity(0))
    found = {}
    for sweep in (1, 2):
        for core in cores:
            rows, stolen = run_timeline(args.cores, core)
            found.setdefault(core, []).append(
                {name: statistics.median(w for _, w, _ in samples) for name, samples in rows.items()}
                | {"stolen": sum(stolen.values())})
            print(f"sweep {sweep}, core {core}: " + ", ".join(
                f"{name} {value:.0f}" for name, value in found[core][-1].items()), file=sys.stderr, flush=True)
    names = [n for n in found[cores[0]][0] if n != "stolen"]
    print(f"| core | " + " | ".join(f"{n} (sweep 1, 2)" for n in names) + " | ticks stolen |")
    print("|---:|" + "---:|" * (len(names) + 1))
    for core, sweeps in found.items():
        cells = [" / ".join(f"{s[n]:.0f}" for s in sweeps) for n in names]
        print(f"| {core} | " + " | ".join(cells) + f" | {sum(s['stolen'] for s in sweeps)} |")
    return found


def settings():
    core = sorted(os.sched_getaffinity(0))[-1]
    yield "plain", []
    no_aslr = bench.no_aslr_prefix()  # what scripts/bench.py runs asv under
    if no_aslr:
        yield "ASLR off", no_aslr
        yield f"ASLR off + core {core}", [*no_aslr, "taskset", "-c", str(core)]
    else:
        print("noise_probe: this kernel refuses setarch -R; only the plain setting", file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--json", help="write every process's medians (or the timeline's samples) here")
    parser.add_argument("--timeline", type=float, metavar="SECONDS", help="one process, over time")
    parser.add_argument("--core", type=int, help="with --timeline: pin to this core (default: the last)")
    parser.add_argument("--cores", type=float, metavar="SECONDS", help="a timeline on each core, twice")
    parser.add_argument("--write-reference", metavar="MACHINE", help="with --timeline: record the floor's "
                        "fastest sample as MACHINE's reference_ns in asv.conf.json (the reference clock's unit)")
    args = parser.parse_args(argv)
    if args.timeline or args.cores:
        found = timeline_main(args) if args.timeline else cores_main(args)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(found, f)
        return 0
    env = dict(os.environ, PYTHONHASHSEED="0")
    found = {}
    for label, prefix in settings():
        runs = []
        for _ in range(args.processes):
            proc = subprocess.run([*prefix, sys.executable, "-c", CHILD], capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                print(f"noise_probe: {label}: the probe failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
                return 1
            runs.append(json.loads(proc.stdout.splitlines()[-1]))
        found[label] = runs
    names = list(next(iter(found.values()))[0])
    print(f"| setting ({args.processes} processes) | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for label, runs in found.items():
        cells = []
        for name in names:
            medians = [run[name] for run in runs]
            cells.append(f"{statistics.median(medians) * 1e9:.0f} ns (spread {(max(medians) / min(medians) - 1) * 100:.1f}%)")
        print(f"| {label} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(found, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
