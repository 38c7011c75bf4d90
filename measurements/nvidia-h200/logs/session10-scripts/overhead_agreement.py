"""How far the recorded over-C++ runs at main agree, run by run (docs/measurement.md, "Across machine starts").

    PYTHONPATH=. .venv/bin/python measurements/nvidia-h200/logs/session10-scripts/overhead_agreement.py

`python -m cuda_bench.report --agreement` compares every recorded run of a commit; this is the same rule
(`report.agreement`: the same ratio within 5% either way) over the four 60-process runs of the 100-call body
(s9a, s9b: session 9, one machine start; s10a, s10b: session 10, another), leaving out between the two
starts the nine sync cases, whose C++ twins changed in between."""
import json
from pathlib import Path

from cuda_bench import report

SYNC = ("StreamSync", "EventQuery", "EventSync")
RUNS = ("s9a", "s9b", "s10a", "s10b")

records = {}
for line in Path("results/nvidia-h200/overhead.jsonl").read_text().splitlines():
    record = json.loads(line)
    label = report.run_label(record).rsplit("-", 1)[-1]
    if label in RUNS:
        records[label] = record

pairs = []
for i, a in enumerate(RUNS):
    for b in RUNS[i + 1:]:
        sync = {c["name"] for c in records[a]["cases"] if any(s in c["name"] for s in SYNC)}
        leave_out = () if a[:-1] == b[:-1] else sync
        pairs += report.agreement([records[a], records[b]], leave_out)
print(report.agreement_markdown(pairs))

print("\nLowest cuda.core / cuda.bindings ratios (a row below 0.9 would mean the two sides differ):")
for run in ("s10a", "s10b"):
    low = sorted(records[run]["cases"], key=lambda c: c["ratio"])[:4]
    print(f"- {run}: " + ", ".join(f"`{c['name'].split('.', 1)[1]}` x{c['ratio']:.3f} [{c['low']:.3f}, {c['high']:.3f}]" for c in low))

print("\nThe sync twins, session 9 (shared stream) -> session 10 (own stream and event):")
cases = {run: {c["name"]: c for c in records[run]["cases"]} for run in RUNS}
for name in sorted(n for n in cases["s10a"] if any(s in n for s in SYNC)):
    cells = [f"{run} x{cases[run][name]['ratio']:.3f} ({cases[run][name]['over_ns']:+.0f} ns)" for run in RUNS if name in cases[run]]
    print(f"- `{name.split('.', 1)[1]}`: " + "; ".join(cells))
