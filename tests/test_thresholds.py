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
