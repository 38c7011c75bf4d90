"""Session 10's same-build A/A, judged held out by the thresholds of session 9's two A/A runs, and the
recorded injected run under all three (docs/measurement.md, "The evidence").

    PYTHONPATH=. .venv/bin/python measurements/nvidia-h200/logs/session10-scripts/aa_heldout.py
"""
import json
import statistics
from pathlib import Path

from cuda_bench import stats

M = Path("measurements/nvidia-h200")


def load(name):
    return json.loads((M / name / "summary.json").read_text())


def thresholds(runs):
    out = {}
    for run in runs:
        for name, t in stats.calibrate(run["cases"]).items():
            out[name] = max(t, out.get(name, 0))
    return out


def flagged(run, limits):
    return [c["name"] for c in run["cases"] if not c["control"]
            and stats.verdict(c["low"], c["high"], limits[c["name"]]) != "same"]


s9 = [load("paired-aa-cb56ab9f9"), load("paired-aa-rebuild-075fdef02")]
s10 = load("paired-aa-cb56ab9f9-s10")
widths = [(c["high"] - c["low"]) / c["ratio"] for c in s10["cases"]]
within = sum(c["low"] >= 0.99 and c["high"] <= 1.01 for c in s10["cases"])
print(f"s10 A/A: {len(s10['cases'])} cases, {within} within ±1%, median width {statistics.median(widths):.2%}")
print("s10 A/A flagged under session 9's thresholds:", flagged(s10, thresholds(s9)))
own = stats.calibrate(s10["cases"]).values()
print(f"s10 A/A's own thresholds: {min(own):.1%}–{max(own):.1%}, median {statistics.median(own):.1%}, "
      f"{sum(t > stats.FLOOR for t in own)} above the floor")
print("injected spin24 flagged under all three A/A runs:", flagged(load("paired-injected-spin24"), thresholds([*s9, s10])))
