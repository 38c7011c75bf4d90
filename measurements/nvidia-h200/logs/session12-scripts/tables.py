"""Session 12: the two tables of docs/measurement.md, "Over C++ in one state", from what is committed.
1. Each full run of 2026-12-04 against the nine fixed-layout runs of 2026-12-03 (report.agreement, read as
   recorded: over every process).
2. The three runs that kept their ABBA groups (logs/session12-call1, -call4), each case read over every
   process and over the fast-state processes at several windows (stats.fast_state), pair by pair.
Run from the repository root: PYTHONPATH=. python measurements/nvidia-h200/logs/session12-scripts/tables.py
"""
import gzip
import itertools
import json
import statistics
from pathlib import Path

from cuda_bench import report, results, stats

runs = {report.run_label(r).replace("overhead-cb56ab9f9-", ""): r
        for r in results.overhead_runs("results", "nvidia-h200") if r["commit"].startswith("cb56ab9f9")}
before = ["s10a", "s10b", "s11-fixed", "s11-fixed2", "s11-fixed3", "s11-call3a", "s11-call3b", "s11-call4a", "s11-call4b"]
after = ["s12-fixed", "s12-call2a", "s12-call2b", "s12-call3a", "s12-call3b", "s12-call5-quieta", "s12-call5-quietb"]
probe = "bench_device.SetCurrent.time_set_current('core')"
print("| run (2026-12-04) | start (UTC) | workers at once / processes | 2026-12-03 runs it agrees with on ≥ 90% "
      "of cases | share of cases | `SetCurrent('core')`: Python, C++, ratio |\n|---|---|---|--:|---|---|")
for b in after:
    shares = [p["agree"] / p["cases"] for a in before for p in report.agreement([runs[a], runs[b]])]
    case = next(c for c in runs[b]["cases"] if c["name"] == probe)
    print(f"| {b} | {runs[b]['host']['boot'][11:16]} | {len(runs[b]['settings']['cores'])} / "
          f"{runs[b]['settings']['processes']} | {sum(x >= 0.9 for x in shares)} of {len(before)} | "
          f"{min(shares):.0%}–{max(shares):.0%} | {case['py_ns']:.0f} ns, {case['cpp_ns']:.1f} ns, ×{case['ratio']:.2f} |")

logs = Path("measurements/nvidia-h200/logs")
kept = {}
for label, path in (("call 1 (15 at once)", "session12-call1/groups.json.gz"),
                    ("call 4 (15 at once)", "session12-call4/groups-all.json.gz"),
                    ("call 4 (3 at once)", "session12-call4/groups-sep.json.gz")):
    with gzip.open(logs / path, "rt") as f:
        kept[label] = json.load(f)["groups"]


def read(groups, window):
    """The case's ratio over every process (window None), over the fast-state processes, or the lowest."""
    case = stats.overhead("x", "x", groups)
    if window is None:
        return case["all"]["ratio"]
    if window == "lowest":
        return min(case["process_ratios"])
    fast = stats.fast_state(case["process_py_ns"], window=window)
    return statistics.median(case["process_ratios"][i] for i in fast)


pairs = list(itertools.combinations(kept, 2))
print("\n| same ratio within 5%, of 17 cases | " + " | ".join(f"{a} / {b}" for a, b in pairs) + " |")
print("|---|" + "--:|" * len(pairs))
for window, words in ((None, "medians over every process"), (1.10, "fast state, within 10%"),
                      (1.15, "fast state, within 15% (the default)"), (1.25, "fast state, within 25%"),
                      (1.5, "fast state, within 50%"), ("lowest", "the lowest process's ratio")):
    value = {k: {n: read(g, window) for n, g in groups.items()} for k, groups in kept.items()}
    counts = [sum(report.apart(value[a][n], value[b][n]) <= 0.05 for n in value[a]) for a, b in pairs]
    print(f"| {words} | " + " | ".join(map(str, counts)) + " |")
