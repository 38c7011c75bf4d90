"""How much do 100-ns calls move from one process to the next on this machine, and what steadies them?

    python scripts/noise_probe.py [--processes 6] [--json OUT.json]

Runs a few of the suite's shortest calls (the harness floor, cuda.core ``Device()``, cuda.bindings
``cuCtxGetDevice``, CuPy ``Device()``) in fresh processes under each launch setting that
``scripts/bench.py`` can use (plain; address-space randomisation off with ``setarch -R``; that plus one
pinned core), with ``PYTHONHASHSEED=0`` throughout, and prints, per setting and call, the spread of the
per-process medians (``max/min - 1``). asv starts every run from a new forkserver, so this spread is the
floor of what an A/A comparison of two asv runs can show. Needs a GPU and the system's cuda.core/CuPy.
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
    parser.add_argument("--json", help="write every process's medians here")
    args = parser.parse_args(argv)
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
