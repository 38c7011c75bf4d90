"""Session 11: over C++ at cb56ab9f9 across machine starts, fixed layouts (the default), every recorded
60-process run: pairs on one start against pairs on two, by the issue's rule (report.agreement: the same
ratio within 5% either way) and, to show how far apart the rest are, within 7.5% and 10%.

Which start each run ran on comes from the device logs (one device call per start unless a call's log says
the machine stayed warm): session 9's two calls shared one start; session 10's two runs were one call;
session 11's calls 1-4 each started a fresh machine (the ones before were given back). Records from call 3
on name their start themselves (host.boot). Between session 9 and later runs the sync twins changed
(StreamSync, EventQuery, EventSync): those cases are left out of such pairs.
Run from the repository root: PYTHONPATH=. python measurements/nvidia-h200/logs/session11-scripts/overhead_starts.py
"""
import itertools
import statistics

from cuda_bench import report, results

START = {"s9a": "S9", "s9b": "S9", "s10a": "S10", "s10b": "S10", "s11-fixed": "S11-1", "s11-fixed2": "S11-2",
         "s11-fixed3": "S11-2", "s11-call3a": "S11-3", "s11-call3b": "S11-3", "s11-call4a": "S11-4",
         "s11-call4b": "S11-4"}
SYNC = {f"bench_{m}.{c}.time_{f}({a!r})" for m, c, f in (("stream", "StreamSync", "stream_sync"),
        ("event", "EventQuery", "event_query"), ("event", "EventSync", "event_sync"))
        for a in ("core", "bindings", "cupy")}

runs = {report.run_label(r).replace("overhead-cb56ab9f9-", ""): r
        for r in results.overhead_runs("results", "nvidia-h200") if r["commit"].startswith("cb56ab9f9")}
runs = {k: r for k, r in runs.items() if k in START}
print(f"{len(runs)} fixed-layout runs on {len(set(START.values()))} machine starts\n")
print("| within | pairs | on one start: pairs reaching 90% | across starts: pairs reaching 90% | across: median share |")
print("|--:|--:|--:|--:|--:|")
for within in (0.05, 0.075, 0.10):
    same, apart = [], []
    for a, b in itertools.combinations(runs, 2):
        leave_out = SYNC if "S9" in (START[a], START[b]) and START[a] != START[b] else ()
        (pair,) = report.agreement([runs[a], runs[b]], leave_out=leave_out, within=within)
        (same if START[a] == START[b] else apart).append(pair["agree"] / pair["cases"])
    print(f"| {within:.1%} | {len(same) + len(apart)} | {sum(x >= 0.9 for x in same)} of {len(same)} "
          f"({min(same):.0%}–{max(same):.0%}) | {sum(x >= 0.9 for x in apart)} of {len(apart)} "
          f"({min(apart):.0%}–{max(apart):.0%}) | {statistics.median(apart):.0%} |")
