"""Ctrl-C 20 times and SIGTERM 10 times, each at a random moment of a `cuda-bench compare` (tests/stop_probe.py):
how long each took to stop, its exit status, the processes and files it left. Run from the project root:
    .venv/bin/python docs/evidence/interrupts/run.py > docs/evidence/interrupts/output.txt
"""
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, "tests")
from test_interrupts import interrupt_once, leftovers  # noqa: E402

rng = random.Random(20261205)
rows, start = [], time.monotonic()
for n, signum in enumerate([signal.SIGINT] * 20 + [signal.SIGTERM] * 10, 1):
    after = rng.uniform(0.2, 8.0)
    with tempfile.TemporaryDirectory() as tmp:
        status, took, left, err = interrupt_once(Path(tmp), signum, after)
        files = leftovers(Path(tmp) / "out")
    rows.append((n, signal.Signals(signum).name, after, status, took, len(left), len(files)))
    print(f"{n:2d} {signal.Signals(signum).name:7s} after {after:4.1f} s: exit {status}, stopped in {took:4.1f} s, "
          f"{len(left)} processes left, {len(files)} files left", flush=True)
bad = [r for r in rows if r[3] not in (130, 0) or r[5] or r[6] or r[4] > 20]
print(f"{len(rows)} interrupts, {len(bad)} not clean; slowest stop {max(r[4] for r in rows):.1f} s; "
      f"{time.monotonic() - start:.0f} s in all")
