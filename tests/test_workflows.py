"""The GitHub workflows and what they post: lint, audit, the safety rules, and the pull-request gate's
comment, verdicts and exit status on the committed paired runs from the H200."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, paired_run

from cuda_bench.compare import comment, gate, paired
from cuda_bench.foundations import stats
from cuda_bench.results import records

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent


def tool(name):
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    assert path, f"{name} is not installed (requirements-test.txt)"
    return path


def test_actionlint_finds_nothing():
    proc = subprocess.run([tool("actionlint")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_finds_nothing():
    proc = subprocess.run([tool("zizmor"), "--offline", ".github/workflows"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout + proc.stderr


def jobs():
    for path in WORKFLOWS:
        workflow = yaml.safe_load(path.read_text())
        for name, job in workflow["jobs"].items():
            yield path.name, workflow, name, job


def test_least_privilege_and_pinned_actions():
    for path in WORKFLOWS:
        text = path.read_text()
        workflow = yaml.safe_load(text)
        assert workflow["permissions"] == {}, path.name  # nothing by default; each job asks
        assert "pull_request_target" not in text, path.name
        for use in re.findall(r"uses:\s*(\S+)", text):
            assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w.-]+)*@[0-9a-f]{40}", use), f"{path.name}: {use} not pinned"
    for file, _, name, job in jobs():
        assert "permissions" in job, f"{file}:{name} has no permissions block"
        assert "secrets" not in json.dumps(job), f"{file}:{name} reaches for secrets"


def test_gpu_jobs_are_read_only_and_serialised():
    gpu_jobs = [(f, n, j) for f, _, n, j in jobs() if "self-hosted" in json.dumps(j["runs-on"])]
    assert {f for f, _, _ in gpu_jobs} == {"benchmark-pr.yml", "nightly.yml"}
    for file, name, job in gpu_jobs:
        assert job["permissions"] == {"contents": "read"}, (file, name)
        assert job["concurrency"]["group"].startswith("gpu-"), (file, name)
        assert job["concurrency"]["cancel-in-progress"] is False, (file, name)
        for step in job["steps"]:
            if "actions/checkout" in step.get("uses", ""):
                assert step["with"]["persist-credentials"] is False, (file, name)


def test_jobs_that_write_run_no_pr_code():
    for file, _, name, job in jobs():
        writes = {k for k, v in job.get("permissions", {}).items() if v == "write"}
        if file == "benchmark-pr.yml" and writes:
            # the comment job: downloads the markdown the GPU job made, never checks anything out
            assert not any("checkout" in s.get("uses", "") for s in job["steps"]), name


def test_a_night_with_a_failure_still_uploads_what_it_measured():
    """scripts/bench run exits non-zero when one benchmark or one step failed; the nightly GPU job's later
    steps (the missing paired steps, the recheck of earlier flags, the upload of results/) still run unless
    the run was cancelled."""
    (job,) = [j for f, _, _, j in jobs() if f == "nightly.yml" and "self-hosted" in json.dumps(j["runs-on"])]
    names = [step.get("name") or step.get("uses") for step in job["steps"]]
    first = next(i for i, step in enumerate(job["steps"]) if "scripts/bench run" in step.get("run", ""))
    later = job["steps"][first + 1:]
    assert any("scripts/bench steps" in step.get("run", "") for step in later), names
    assert any("scripts/bench steps --recheck" in step.get("run", "") for step in later), names
    assert later and all(step.get("if") == "${{ !cancelled() }}" for step in later), names


def test_every_bench_command_in_the_workflows_is_one_the_tool_takes():
    """Each `./scripts/bench ...` line of a workflow parses with the tool's own parser, and what `run` and
    `ladder` hand on to asv are options `asv run` has: a typo fails here, not at 03:17 on a GPU runner."""
    import re
    import shlex
    import subprocess
    import sys

    from cuda_bench import cli

    asv_help = subprocess.run([sys.executable, "-m", "asv", "run", "--help"], capture_output=True, text=True).stdout
    found = []
    for path in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        for line in path.read_text().splitlines():
            line = line.strip().removeprefix("run:").strip()
            if line.startswith("./scripts/bench "):
                words = shlex.split(line.split("&&")[0].split("|")[0].replace("${{", "X").replace("}}", "X"))
                args, rest = cli.parser().parse_known_args(words[1:])
                assert not rest or args.command in ("run", "ladder"), (path.name, line)
                assert all(re.search(rf"(?<![\w-]){re.escape(word.split('=')[0])}(?![\w-])", asv_help)
                           for word in rest if word.startswith("-")), (path.name, line)
                found.append(args.command)
    assert {"run", "steps", "publish", "compare"} <= set(found), found


def scripts_test_runs(tmp_path, *args):
    """What ``scripts/test`` hands ruff and pytest for ``args``, with a stand-in of .venv whose ruff
    and Python only say how they were called."""
    import hashlib

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    stamp = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    (venv / ".stamp-test").write_text(stamp + "\n")  # installed: nothing to install
    record = venv / "lib" / "python3" / "site-packages" / "cuda_python_bench-0.1.0.dist-info" / "direct_url.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"dir_info": {"editable": True}, "url": f"file://{ROOT}"}))  # this checkout's
    for name in ("ruff", "python"):
        says = f"#!/bin/sh\nprintf '{name}'; printf ' <%s>' \"$@\"; echo\n"
        (venv / "bin" / name).write_text(says)
        (venv / "bin" / name).chmod(0o755)
    proc = subprocess.run([str(ROOT / "scripts" / "test"), *args], capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "CUDA_BENCH_VENV": str(venv)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_the_fast_lane_leaves_out_the_slow_tests_and_ci_runs_them_all(tmp_path, pytestconfig):
    """``scripts/test --fast`` is pytest -m "not slow" (the marker pyproject.toml registers, and
    pytest refuses one it does not know), other arguments passed as they are; ``.ci/run``, which
    ci.yml runs, calls ``scripts/test`` without it: CI runs the full suite."""
    ruff, ruff_format, pytest_line = scripts_test_runs(tmp_path, "--fast", "-x", "tests/test_records.py")
    assert ruff == "ruff <check> <cuda_bench> <benchmarks> <tests>"
    assert ruff_format == "ruff <format> <--check> <--quiet> <cuda_bench>"
    assert pytest_line == "python <-m> <pytest> <-m> <not slow> <-x> <tests/test_records.py>"
    assert scripts_test_runs(tmp_path)[2] == "python <-m> <pytest>"  # every test (testpaths)
    assert "--strict-markers" in pytestconfig.getini("addopts")  # pytest reads pyproject.toml's
    assert "slow" in [m.split(":")[0] for m in pytestconfig.getini("markers")]
    ci = (ROOT / ".ci" / "run").read_text()
    (command,) = [line for line in ci.splitlines()
                  if "scripts/test" in line and not line.startswith("#")]
    assert command.split()[:2] == ["exec", "./scripts/test"]
    assert "--fast" not in command and "-m" not in command.split()
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    assert "./.ci/run" in [s.get("run") for s in steps]


def test_pr_workflow_can_be_called_and_dispatched():
    on = yaml.safe_load((ROOT / ".github/workflows/benchmark-pr.yml").read_text())[True]  # YAML's `on`
    assert {"workflow_call", "workflow_dispatch"} <= set(on)
    assert on["workflow_call"]["inputs"].keys() == on["workflow_dispatch"]["inputs"].keys() >= {"base", "head"}


PAIRED = sorted((Path(__file__).parent / "fixtures" / "paired").glob("*.json"))
SLOWED = "bench_device.SetCurrent.time_set_current('core')"


@pytest.mark.parametrize("path", PAIRED, ids=lambda p: p.stem)
def test_h200_paired_runs_read_to_their_own_intervals_verdicts_and_exit_status(path):
    """Real H200 paired runs (fixtures/paired): each case's ratio and interval are the median of its process
    pairs' ratios and that median's order-statistic interval, every verdict rests on its interval and threshold,
    and the exit status follows the verdicts, the errors and the lost pairs."""
    data = json.loads(path.read_text())
    assert data["kind"] in ("pr", "aa", "injected", "release") and data["base"] and data["head"] and data["seconds"] > 0
    for case in data["cases"]:
        ratio, low, high, coverage = stats.median_interval(case["pairs"], data["settings"]["confidence"])
        # the record keeps each pair's ratio to 5 decimals: a median of two of them may differ in the last one
        assert (ratio, low, high) == pytest.approx((case["ratio"], case["low"], case["high"]), abs=1.1e-5)
        expected = "same" if case["control"] or case["coverage"] < data["settings"]["confidence"] else \
            stats.verdict(case["low"], case["high"], case["threshold"])
        assert case["verdict"] == expected, case["name"]
    assert gate.exit_status(data) == (1 if paired.regressions(data) else 2 if data["errors"] or data["lost"] else 0)
    assert comment.comment(data).startswith(comment.MARKER)


def test_the_pr_comment_leads_with_what_changed():
    data = paired_run("injected-spin24")
    body = comment.comment(data)
    assert body.startswith(comment.MARKER)
    first_case = body.index("| `bench_")
    assert body.index("#### Regressions") < first_case < body.index("<details>")
    assert f"| `{SLOWED}` (`Device.set_current`) |" in body.split("<details>")[0]
    assert "Controls (no cuda-python code" in body and "95% interval" in body


def test_the_pr_comment_names_a_case_measured_without_some_process_pairs():
    lost = {SLOWED: "1 of 45 process pairs lost, measured from the other 44; the first: head worker (b) died (exit 7)"}
    data = paired_run("injected-spin24") | {"lost": lost}
    body = comment.comment(data)
    assert "#### Measured without some process pairs" in body and "1 measured without some process pairs" in body
    assert f"- `{SLOWED}`: 1 of 45 process pairs lost" in body and "died (exit 7)" in body
    assert gate.exit_status(data) == 1  # the verdict stands on the 44 pairs
    data = paired_run("aa")
    assert gate.exit_status(data) == 0 and gate.exit_status(data | {"lost": lost}) == 2  # shown, and not a pass


def test_aa_of_the_whole_suite_flags_nothing_and_reads_one():
    """The A/A runs on the H200 (the same build on both sides; and two builds of the same behaviour):
    no case flagged, at least 95% of the cases within 1% of 1."""
    for name in ("aa", "aa-fixed-layout", "aa-rebuild-fixed-layout"):
        data = paired_run(name)
        cases = paired.counted(data)
        assert len(cases) >= 85 and not data["errors"]
        assert [c["name"] for c in cases if c["verdict"] != "same"] == []
        assert sum(abs(c["ratio"] - 1) <= 0.01 for c in cases) >= 0.95 * len(cases)
        assert gate.exit_status(data) == 0


def test_an_injected_slowdown_is_flagged_alone():
    """main against a commit that adds a 24-iteration spin to Device.set_current (+23 ns in a 413 ns call, H200)."""
    data = paired_run("injected-spin24")
    assert data["kind"] == "injected" and data["expected"] == [SLOWED]
    flagged = [c for c in paired.counted(data) if c["verdict"] != "same"]
    assert [c["name"] for c in flagged] == [SLOWED] and flagged[0]["verdict"] == "regression"
    case = flagged[0]
    # small: at most 5 %, or a fixed ~30 ns in a ~400 ns call
    assert 1.0 < case["ratio"] <= 1.05 or (case["head_ns"] - case["base_ns"] <= 30 and case["base_ns"] >= 300)
    assert gate.exit_status(data) == 1


def test_calibration_covers_every_committed_aa_run():
    """results/<machine>/calibration.jsonl: the thresholds the PR gate uses keep each recorded A/A silent."""
    thresholds = records.calibration(Path(ROOT / "results") / "nvidia-h200")
    assert thresholds and min(thresholds.values()) >= stats.MIN_THRESHOLD
    for name in ("aa-fixed-layout", "aa-rebuild-fixed-layout"):
        for case in paired.counted(paired_run(name)):
            assert stats.verdict(case["low"], case["high"], thresholds[case["name"]]) == "same", case["name"]
