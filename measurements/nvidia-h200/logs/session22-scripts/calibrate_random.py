"""Session 22, on this machine after random_suite.sh: the two whole-suite A/A runs with random layouts (the A/B
engine's new default) become calibrations of the H200, as `scripts/bench aa` would have written them, so that
each case's threshold (the highest over every A/A recorded) also covers A/A under random layouts.
Usage: PYTHONPATH=. python measurements/nvidia-h200/logs/session22-scripts/calibrate_random.py"""
import json

from cuda_bench import compare, results
from cuda_bench.layout import CALIBRATION, RESULTS

for run in ("paired-aa-random-suite-1", "paired-aa-random-suite-2"):
    data = json.loads((RESULTS.parent / "measurements/nvidia-h200/check-s22" / run / "summary.json").read_text())
    assert data["settings"]["layouts"] == "random" and data["base"] == data["head"]
    record = compare.calibration_record(data)
    results.append_line(RESULTS / "nvidia-h200" / CALIBRATION, record)
    print(f"{run}: {len(record['thresholds'])} thresholds -> results/nvidia-h200/{CALIBRATION}")
