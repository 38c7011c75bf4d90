"""Session 15's tables (docs/measurement.md): each fast-state over-C++ run at cb56ab9f9, its launch rows' ratio
shift and the launch twins' pace beside the CPU-bound twins; the fit over the 18 runs before the second start
(written down in PREDICTION.md before it ran) and how it predicted that start's two runs; the memory/CPU load
subsets of the first start. Run: PYTHONPATH=. .venv/bin/python measurements/nvidia-h200/logs/session15-scripts/launch_path.py

Pace: the median over the 18 launches with arguments of cpp_ns over the case's median in the 18 runs, over
the same median for the subset's twelve other cases (SetCurrent, ComputeCapability, CurrentComputeCapability,
GetKernel, three apis each). Shift: the same median for the launches' ratios. As in session 15's first
version of this script (commit fedb9fb), which the prediction was made with.
"""
import json
import re
import statistics as st

from cuda_bench import report, results
from cuda_bench.layout import MEASUREMENTS, RESULTS

CPU_BOUND = ("SetCurrent", "ComputeCapability", "CurrentComputeCapability", "GetKernel")
runs = [r for r in results.overhead_runs(RESULTS, "nvidia-h200")
        if r["commit"].startswith("cb56ab9f9") and report.fast_kind(report.run_kind(r))]
later = [r for r in runs if re.search(r"-s15-call[235]", report.run_label(r))]  # measured after the fit
fitted = [r for r in runs if r not in later]
loads = [json.loads((MEASUREMENTS / "nvidia-h200" / f"overhead-cb56ab9f9-s15-call1-subset-{load}" /
                     "overhead.json").read_text()) for load in ("idle", "memory", "cpu")]
names = [c["name"] for c in runs[0]["cases"]]
launches = [n for n in names if ".Launch.time_launch(" in n and "'none'" not in n]
cpu = [n for n in names if n.split(".")[1] in CPU_BOUND]


def cases(record):
    return {c["name"]: c for c in record["cases"]}


median = {(n, k): st.median(cases(r)[n][k] for r in fitted) for n in names for k in ("ratio", "cpp_ns")}


def pace_and_shift(record):
    c = cases(record)

    def rel(ns, key):
        return st.median(c[n][key] / median[(n, key)] for n in ns)

    return rel(launches, "cpp_ns") / rel(cpu, "cpp_ns"), rel(launches, "ratio")


paces, shifts = zip(*map(pace_and_shift, fitted))
slope, intercept = st.linear_regression(paces, shifts)
factors = dict(zip(map(id, runs), report.slow_factors(runs)))
print(f"fit over {len(fitted)} runs: shift = {intercept:.3f} {slope:+.3f} x pace; "
      f"correlation {st.correlation(paces, shifts):.3f}; residuals within "
      f"{max(abs(s - intercept - slope * p) for p, s in zip(paces, shifts)):.1%}\n")
print("| run | slow factor | launch twins' pace beside the CPU-bound twins | launch rows' ratio shift | "
      "predicted | `Launch('bindings', '16 int')` over C++ | its C++ twin |")
print("|---|--:|--:|--:|--:|--:|--:|")
L = "bench_launch.Launch.time_launch('bindings', '16 int')"
for r in [*runs, *loads]:
    pace, shift = pace_and_shift(r)
    predicted = f"{intercept + slope * pace:.3f}" if r in later else ""
    factor = factors.get(id(r)) or report.slow_factors([r], runs)[0]
    label = report.run_label(r).replace("overhead-cb56ab9f9-", "")
    print(f"| {label} | ×{factor:.3f} | {pace:.3f} | {shift:.3f} | {predicted} | ×{cases(r)[L]['ratio']:.2f} | "
          f"{cases(r)[L]['cpp_ns']:.0f} ns |")
