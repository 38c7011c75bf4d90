"""How far the recorded over-C++ runs at main agree, run by run (docs/measurement.md, "Over C++, paired").

    python measurements/nvidia-h200/logs/session10-scripts/overhead_agreement.py

Reads results/nvidia-h200/overhead.jsonl; a run is named by its --out folder's suffix (s9a, s9b: session 9,
one machine start; s10a, s10b: session 10, another start, with the sync twins on a stream and event of
their own). Two runs agree on a case when their ratios differ by at most 5% either way
(max(a/b, b/a) <= 1.05; session 9's table took b/a - 1, which counted 84 of 91 for s9a / s9b)."""
import itertools
import json
import re
from pathlib import Path

SYNC = ("StreamSync", "EventQuery", "EventSync")  # twins changed between session 9 and 10
RUNS = ("s9a", "s9b", "s10a", "s10b")

records = {}
for line in Path("results/nvidia-h200/overhead.jsonl").read_text().splitlines():
    r = json.loads(line)
    m = re.search(r"overhead-\w+-(s\d+\w)", r["command"])
    if m and m.group(1) in RUNS:
        records[m.group(1)] = {c["name"]: c for c in r["cases"]}


def spread(d):  # b/a - 1 -> how far apart either way
    return max(1 + d, 1 / (1 + d)) - 1


def agreement(a, b, drop=()):
    names = [n for n in records[a] if n in records[b] and not any(s in n for s in drop)]
    off = sorted(((records[b][n]["ratio"] / records[a][n]["ratio"] - 1, n) for n in names), key=lambda x: -spread(x[0]))
    within = sum(spread(d) <= 0.05 for d, _ in off)
    return within, len(names), off


print("| runs | machine starts | cases | within 5% | within 2% | largest differences |")
print("|---|---|--:|--:|--:|---|")
for a, b in itertools.combinations(RUNS, 2):
    same = a[:-1] == b[:-1]
    drop = () if same else SYNC
    within, n, off = agreement(a, b, drop)
    two = sum(spread(d) <= 0.02 for d, _ in off)
    worst = ", ".join(f"`{re.sub(r'[.]time_[a-z_]+', '', n.split('.', 1)[1])}` {d:+.1%}" for d, n in off[:3])
    print(f"| {a} / {b} | {'one' if same else 'two'} | {n} | **{within} ({within / n:.0%})** | {two} | {worst} |")

print("\nLowest cuda.core / cuda.bindings ratios (a row below 0.9 would mean the two sides differ):")
for run in ("s10a", "s10b"):
    low = sorted(records[run].values(), key=lambda c: c["ratio"])[:4]
    print(f"- {run}: " + ", ".join(f"`{c['name'].split('.', 1)[1]}` x{c['ratio']:.3f} [{c['low']:.3f}, {c['high']:.3f}]" for c in low))

print("\nThe sync twins, session 9 (shared stream) -> session 10 (own stream and event):")
for name in sorted(n for n in records["s10a"] if any(s in n for s in SYNC)):
    cells = [f"{run} x{records[run][name]['ratio']:.3f} ({records[run][name]['over_ns']:+.0f} ns)" for run in RUNS if name in records[run]]
    print(f"- `{name.split('.', 1)[1]}`: " + "; ".join(cells))
