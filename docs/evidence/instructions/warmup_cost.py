"""What a heavy call's warm-up costs under callgrind against its count (docs/method.md,
"Instructions per call").

A body of 100 calls that each pack 512 ctypes arguments (about a million instructions a call, the
order of a launch with 512 arguments), in one process run under valgrind as the instruction pass
runs its workers (``callgrind.command``: instrumentation and collection off at the start): the
seconds of 64 and of 8 uncounted bodies (the warm-up before and after the probe), and of
``instructions.count`` (its 8 bodies, the probe, one repeat), with the instructions per call it
reads.

    python docs/evidence/instructions/warmup_cost.py      # runs itself under valgrind
"""

import ctypes
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from cuda_bench.foundations import callgrind, instructions  # noqa: E402

ARGS = [ctypes.c_int(i) for i in range(512)]


def call():
    return (ctypes.c_void_p * 512)(*[ctypes.addressof(a) for a in ARGS])


def body():
    for _ in range(100):
        call()


def under_valgrind():
    requests = callgrind.requests()
    loops = {"noop": instructions._runner(), "body": instructions._runner()}
    out = {}
    for bodies in (64, 8):
        start = time.monotonic()
        instructions._warm(loops, body, bodies, 1, None)
        out[f"{bodies} bodies uncounted"] = time.monotonic() - start
    start = time.monotonic()
    found = instructions.count(body, unroll=100, requests=requests, label="warmup_cost")
    out["count() in all (probe, then one repeat)"] = time.monotonic() - start
    totals = {r["file"]: callgrind.total(r["file"]) for r in found["runs"]}
    value, *_ = instructions.per_call(found["runs"], totals)
    for run in found["runs"]:
        os.unlink(run["file"])
    for what, seconds in out.items():
        print(f"{what:>42}: {seconds:5.2f} s")
    print(
        f"{'instructions per call':>42}: {value:,.0f} "
        f"(repeats {len({r['repeat'] for r in found['runs']})}, warm-up {found['warmup']} bodies)"
    )


if __name__ == "__main__":
    if callgrind.requests().running():
        under_valgrind()
    else:
        valgrind, why = callgrind.find()
        if valgrind is None:
            sys.exit(why)
        with tempfile.TemporaryDirectory() as folder:
            template = f"{folder}/callgrind.out.%p"
            env = {**os.environ, callgrind.OUT_VARIABLE: template}
            print(
                f"valgrind {callgrind.version(valgrind)}, Python {sys.version.split()[0]}, "
                f"{os.uname().machine}"
            )
            sys.exit(
                subprocess.run(
                    [*callgrind.command(valgrind, template), sys.executable, __file__],
                    env=env,
                    stderr=subprocess.DEVNULL,
                ).returncode
            )
