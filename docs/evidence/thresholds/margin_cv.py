"""How wide must a case's threshold be? Leave-one-out over every paired A/A run recorded on the H200.

For each rule (a margin times the A/A interval's far end, as `stats.calibrate`; or times its point
estimate), calibrate on all A/A runs but one and count the held-out run's cases that the rule would flag
(false flags); then calibrate on all of them and ask whether each recorded injected slowdown (spin 24 in
Device.set_current) is flagged, and whether anything else is. The runs are read from git history (each
recording replaced the files of the one before). Run from the repository root:

    python docs/evidence/thresholds/margin_cv.py
"""
import json
import math
import subprocess
import sys

sys.path.insert(0, ".")
from cuda_bench.foundations import stats  # noqa: E402

RECORDINGS = (("e80df71", "s7"), ("c90621b", "s8"), ("5d85efa", "s9"))  # the recording commits


def load(commit, path):
    out = subprocess.run(["git", "show", f"{commit}:measurements/nvidia-h200/{path}/summary.json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def cases(run):
    return {c["name"]: c for c in run["cases"] if not c.get("control") and "high" in c}


def point_calibrate(run_cases, margin):
    """As ``stats.calibrate``, on the interval's point estimate instead of its far end."""
    out = {}
    for c in run_cases:
        if c.get("control"):
            continue
        r = c["ratio"] - 1 if c["ratio"] >= 1 else 1 / c["ratio"] - 1
        out[c["name"]] = max(stats.FLOOR, math.ceil(margin * r * 1000) / 1000)
    return out


def thresholds(runs, margin, reach):
    """Per case the highest over ``runs``, as results.calibration merges calibration.jsonl's lines."""
    calibrate = stats.calibrate if reach == "far end" else point_calibrate
    out = {}
    for run in runs:
        for name, t in calibrate([c for c in run["cases"] if "high" in c], margin).items():
            out[name] = max(out.get(name, 0), t)
    return out


aa = {}
for commit, s in RECORDINGS:
    aa[f"{s} same build"] = load(commit, "paired-aa-cb56ab9f9")
    aa[f"{s} rebuild"] = load(commit, "paired-aa-rebuild-075fdef02")
aa["s7 same build (explore)"] = load("5d85efa", "explore-paired/aa-45pairs-0.1s-call3")
injected = {s: load(commit, "paired-injected-spin24") for commit, s in RECORDINGS}

print(f"{len(aa)} A/A runs: {', '.join(aa)}")
print("| threshold rule | held-out A/A cases flagged | spin 24 flagged (s7, s8, s9) | other cases flagged | SetCurrent('core') threshold |")
print("|---|--:|---|--:|--:|")
for reach in ("far end", "point"):
    for margin in (1.0, 1.5, 2.0):
        flags = total = 0
        for held in aa:
            t = thresholds([aa[k] for k in aa if k != held], margin, reach)
            for name, c in cases(aa[held]).items():
                if name in t:
                    total += 1
                    flags += stats.verdict(c["low"], c["high"], t[name]) != "same"
        t = thresholds(aa.values(), margin, reach)
        hits, others = [], 0
        for s, run in injected.items():
            flagged = {n for n, c in cases(run).items() if n in t and stats.verdict(c["low"], c["high"], t[n]) != "same"}
            hits.append("yes" if set(run["expected"]) <= flagged else "no")
            others += len(flagged - set(run["expected"]))
        slowed = injected["s9"]["expected"][0]
        print(f"| {margin:g} × {reach} | {flags} of {total} | {', '.join(hits)} | {others} | {t[slowed]:.1%} |")
