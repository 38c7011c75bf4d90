"""Session 15's last call (gpu_state.sh): per subset run, the launch path's pace and the launch rows' shift (as
launch_path.py computes them, against the same 18 runs) beside what nvidia-smi logged during the run: SM
clock, performance state, PCIe link, event reasons, power. Run:
PYTHONPATH=. .venv/bin/python measurements/nvidia-h200/logs/session15-scripts/gpu_state.py
"""
import collections
import csv
import json
import re
import statistics as st
from datetime import datetime

from cuda_bench import report, results
from cuda_bench.layout import MEASUREMENTS, RESULTS

HERE = MEASUREMENTS / "nvidia-h200"
LOGS = HERE / "logs" / "session15-call4"
CPU_BOUND = ("SetCurrent", "ComputeCapability", "CurrentComputeCapability", "GetKernel")

samples = []
for row in list(csv.reader(open(LOGS / "gpu.csv")))[1:]:
    if len(row) >= 10 and "MHz" in row[2]:
        samples.append({"t": datetime.strptime(row[0].strip(), "%Y/%m/%d %H:%M:%S.%f"), "pstate": row[1].strip(),
                        "sm": int(row[2].split()[0]), "pcie": f"gen{row[5].strip()} x{row[6].strip()}",
                        "power": float(row[7].split()[0]), "reasons": row[9].strip()})
windows = {}
for line in open(LOGS / "times.txt"):
    name, edge, stamp = line.split()
    windows.setdefault(name, {})[edge] = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ")

runs = [r for r in results.overhead_runs(RESULTS, "nvidia-h200")
        if r["commit"].startswith("cb56ab9f9") and report.fast_kind(report.run_kind(r))]
fitted = [r for r in runs if not re.search(r"-s15-call[235]", report.run_label(r))]  # the 18 of launch_path.py


def cases(record):
    return {c["name"]: c for c in record["cases"]}


names = [c["name"] for c in fitted[0]["cases"]]
launches = [n for n in names if ".Launch.time_launch(" in n and "'none'" not in n]
cpu = [n for n in names if n.split(".")[1] in CPU_BOUND]
median = {(n, k): st.median(cases(r)[n][k] for r in fitted) for n in launches + cpu for k in ("ratio", "cpp_ns")}

print("| subset run | slow factor | pace | launch shift | fit | SM clock while working (share of samples) | "
      "PCIe | power (median) |")
print("|---|--:|--:|--:|--:|---|---|--:|")
for name in sorted(windows):
    record = json.loads((HERE / f"overhead-cb56ab9f9-s15-call4-{name}" / "overhead.json").read_text())
    c = cases(record)

    def rel(ns, key):
        return st.median(c[n][key] / median[(n, key)] for n in ns)

    pace, shift = rel(launches, "cpp_ns") / rel(cpu, "cpp_ns"), rel(launches, "ratio")
    during = [s for s in samples if windows[name]["start"] <= s["t"] <= windows[name]["end"]]
    busy = [s for s in during if s["reasons"] != "0x0000000000000001"]  # not "GPU idle"
    clocks = collections.Counter(s["sm"] for s in busy)
    top = ", ".join(f"{mhz} MHz {n / len(busy):.0%}" for mhz, n in clocks.most_common(2))
    print(f"| {name} | ×{report.slow_factors([record], runs)[0]:.3f} | {pace:.3f} | {shift:.3f} | "
          f"{1.618 - 0.614 * pace:.3f} | {top} | {', '.join(sorted({s['pcie'] for s in during}))} | "
          f"{st.median(s['power'] for s in during):.0f} W |")
