"""scripts/thresholds.py on the recorded H200 results: c278ecb3 and cb56ab9f measured the same code
(cb56ab9f changed only cuda_bindings, which these runs take from one wheel), so they are an A/A pair."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import json5
import pytest

from conftest import ROOT, asv_conf, real_results_in_a_repo

sys.path.insert(0, str(ROOT / "scripts"))
import thresholds  # noqa: E402

AA = ["c278ecb3", "cb56ab9f"]
RESULTS = ROOT / "results"


def test_thresholds_clear_the_measured_spread():
    runs = thresholds.results_for(RESULTS, "nvidia-h200", AA)
    thresholds.same_code([RESULTS], "nvidia-h200", runs)
    spread = thresholds.spreads(runs)
    result = thresholds.thresholds(spread)
    assert len(result) > 100  # every benchmark and case measured in both runs
    for name, t in result.items():
        assert t >= thresholds.FLOOR and t >= thresholds.MARGIN * spread[name] - 1e-9, name


def test_runs_of_different_code_are_refused():
    runs = thresholds.results_for(RESULTS, "nvidia-h200", ["76bac4e1", "cb56ab9f"])  # cuda_core differs
    with pytest.raises(thresholds.ThresholdError, match="different code"):
        thresholds.same_code([RESULTS], "nvidia-h200", runs)


def aa_dashboard(tmp, conf_overrides):
    """Publish only the A/A pair, with the given thresholds; return what asv flags."""
    source = tmp / "aa-results"
    (source / "nvidia-h200").mkdir(parents=True)
    for path in (RESULTS / "nvidia-h200").iterdir():
        if path.name in ("machine.json", "builds.jsonl") or path.name[:8] in AA:
            shutil.copy2(path, source / "nvidia-h200" / path.name)
    shutil.copy2(RESULTS / "benchmarks.json", source / "benchmarks.json")
    repo, results, _ = real_results_in_a_repo(tmp, source)
    conf = asv_conf(tmp, repo, sys.executable, results_dir=str(results), **conf_overrides)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "dashboard.py"), "publish", "--config", str(conf)],
                   check=True, capture_output=True)
    return json.loads((tmp / "html" / "regressions.json").read_text())["regressions"]


def test_written_thresholds_silence_the_aa_pair_that_the_default_flags(tmp_path):
    config = tmp_path / "asv.conf.json"
    shutil.copy2(ROOT / "asv.conf.json", config)
    assert subprocess.run([sys.executable, str(ROOT / "scripts" / "thresholds.py"), "--machine", "nvidia-h200",
                           "--commits", *AA, "--config", str(config), "--write"], capture_output=True).returncode == 0
    written = json5.loads(config.read_text())["regressions_thresholds"]
    assert written[".*"] == thresholds.DEFAULT and len(written) > 100

    default = aa_dashboard(tmp_path / "default", {})
    assert default, "the default thresholds flag this A/A pair (that is the noise the script measures)"
    tuned = aa_dashboard(tmp_path / "tuned", {"regressions_thresholds": written})
    assert tuned == []


def run_dir(tmp, name, prefix, builds=True):
    """A results directory holding one run (what `scripts/bench aa` writes), from a recorded result."""
    folder = tmp / name / "nvidia-h200"
    folder.mkdir(parents=True)
    for path in (RESULTS / "nvidia-h200").iterdir():
        if path.name == "machine.json" or path.name[:8] == prefix or (builds and path.name == "builds.jsonl"):
            shutil.copy2(path, folder / path.name)
    return folder.parent


def test_runs_from_results_directories(tmp_path):
    same = [run_dir(tmp_path, f"same-{i}", "cb56ab9f", builds=False) for i in range(2)]
    runs = thresholds.results_of_runs(same, "nvidia-h200")
    thresholds.same_code(same, "nvidia-h200", runs)  # one commit, one environment: no build record needed
    assert set(thresholds.spreads(runs).values()) == {0.0}

    pair = [run_dir(tmp_path, "a", "c278ecb3"), run_dir(tmp_path, "b", "cb56ab9f")]
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "thresholds.py"), "--machine", "nvidia-h200",
                           "--runs", *map(str, pair), "--summary"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "| all | 122 |" in proc.stdout

    mixed = [run_dir(tmp_path, "c", "76bac4e1", builds=False), run_dir(tmp_path, "d", "cb56ab9f", builds=False)]
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "thresholds.py"), "--machine", "nvidia-h200",
                           "--runs", *map(str, mixed), "--results", str(tmp_path / "none")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "cannot tell that they measure the same code" in proc.stderr


MEASURED = ROOT / "measurements" / "nvidia-h200"
AA3 = [MEASURED / "aa3-cb56ab9f9" / f"run-{i}" for i in (1, 2, 3)]
# the same commit's rounds in the three A/A runs (2 rounds each) and as the base of two comparisons (4 each)
POOL = [*map(str, AA3), f"{MEASURED / 'power-230377c'}:cb56ab9f", f"{MEASURED / 'aa-compare-b04e805'}:cb56ab9f"]
POOL_ROUNDS = [2, 2, 2, 4, 4]


def test_fastest_sample_spread_of_the_three_run_aa():
    """The H200 A/A of main with samples recorded: each run's fastest sample is never above its median,
    and the summary reports both statistics."""
    runs = thresholds.results_of_runs(AA3, "nvidia-h200")
    assert thresholds.has_samples(runs)
    fastest = thresholds.spreads(runs, "fastest")
    assert len(fastest) == 90  # the cases with samples: every Python form (C++ twins report one number)
    for run in runs:
        medians, minima = thresholds.values(run), thresholds.fastest(run)
        assert all(minima[key] <= medians[key] for key in minima if minima[key] is not None)
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "thresholds.py"), "--machine", "nvidia-h200",
                           "--runs", *map(str, AA3), "--summary"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "3 runs' medians" in proc.stdout and "| all | 122 |" in proc.stdout
    assert "3 runs' fastest samples" in proc.stdout and "| all | 90 |" in proc.stdout


def test_round_minima_split_each_run_into_its_rounds():
    runs = thresholds.results_of_runs(POOL, "nvidia-h200")
    pool = thresholds.round_minima(runs, POOL_ROUNDS)
    assert len(pool) == 90 and all(len(m) == sum(POOL_ROUNDS) for m in pool.values())
    # the fastest round of the pool is the fastest sample of all five runs
    name, key = "bench_device.SetCurrent.time_set_current('core')", ("bench_device.SetCurrent.time_set_current",
                                                                     ("'core'",))
    samples = [thresholds.values(run, "samples")[key] for run in runs]
    assert min(pool[name]) == min(v for run in samples for v in run)
    # the second A/A run's two rounds: the fastest of each half of its samples
    half = len(samples[1]) // 2
    assert pool[name][2:4] == [min(samples[1][:half]), min(samples[1][half:])]


def test_rounds_table_on_synthetic_and_recorded_rounds():
    steady = {"a": [1.0] * 8, "b": [2.0] * 8}
    assert thresholds.false_flags(steady, 4, 1.1) == (0, 1.0)
    # one case at full speed in half its rounds, twice slower in the other half: an A/A comparison of one
    # round a side flags it when the base drew a fast round and the head a slow one: 4/8 * 4/7
    mixed = {"c": [1.0] * 4 + [2.0] * 4}
    mean, _ = thresholds.false_flags(mixed, 1, 1.1, trials=4000)
    assert abs(mean - 4 / 8 * 4 / 7) < 0.03

    runs = thresholds.results_of_runs(POOL, "nvidia-h200")
    pool = thresholds.round_minima(runs, POOL_ROUNDS)
    flagged = [thresholds.false_flags(pool, k, 1.1)[0] for k in (1, 4, 7)]
    assert flagged[0] > flagged[1] > flagged[2] > 0  # more rounds, fewer false flags; this VM never gets to none
    assert thresholds.false_flags(pool, 4, 100.0) == (0, 1.0)


def test_rounds_cli():
    script = [sys.executable, str(ROOT / "scripts" / "thresholds.py"), "--machine", "nvidia-h200"]
    proc = subprocess.run([*script, "--runs", *POOL, "--rounds", *map(str, POOL_ROUNDS)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert "90 cases, 14 rounds each pooled" in proc.stdout and "\n| 7 |" in proc.stdout
    proc = subprocess.run([*script, "--runs", *POOL, "--rounds", "2", "4"], capture_output=True, text=True)
    assert proc.returncode == 2 and "one count for all runs or one per run" in proc.stderr
    both = str(MEASURED / "aa-compare-b04e805")
    proc = subprocess.run([*script, "--runs", both, str(AA3[0]), "--rounds", "2"], capture_output=True, text=True)
    assert proc.returncode == 2 and "DIR:COMMIT" in proc.stderr


def test_the_reference_clock_a_a_is_what_measurement_md_says():
    """docs/measurement.md: three runs of main, the 90 Python cases' median spread of medians, wall clock
    (session 5) against the reference clock (2026-12-03): 39% -> 7%, 1 -> 13 within 3%, 8 -> 59 within 10%."""
    import statistics

    found = {}
    for name in ("aa3-cb56ab9f9", "aa3-cb56ab9f9-reference"):
        runs = thresholds.results_of_runs([str(MEASURED / name / f"run-{i}") for i in (1, 2, 3)], "nvidia-h200")
        python = [v for k, v in thresholds.spreads(runs).items() if not k.startswith("bench_cpp")]
        assert len(python) == 90
        found[name] = (round(statistics.median(python) * 100), sum(v <= 0.03 for v in python),
                       sum(v <= 0.10 for v in python))
    assert found == {"aa3-cb56ab9f9": (39, 1, 8), "aa3-cb56ab9f9-reference": (7, 13, 59)}
