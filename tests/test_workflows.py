"""The GitHub workflows and what they post: lint, audit, the safety rules, and the two formatters on
real asv output from the real results under results/."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, asv_conf, real_results_in_a_repo, run_asv

sys.path.insert(0, str(ROOT / "scripts"))
import compare  # noqa: E402
import regression_issue  # noqa: E402

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


def test_pr_workflow_can_be_called_and_dispatched():
    on = yaml.safe_load((ROOT / ".github/workflows/benchmark-pr.yml").read_text())[True]  # YAML's `on`
    assert {"workflow_call", "workflow_dispatch"} <= set(on)
    assert on["workflow_call"]["inputs"].keys() == on["workflow_dispatch"]["inputs"].keys() >= {"base", "head"}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """The committed results where asv can compare and publish them, and the two newest commits."""
    tmp = tmp_path_factory.mktemp("real")
    repo, results, rekeyed = real_results_in_a_repo(tmp)
    conf = asv_conf(tmp, repo, sys.executable, results_dir=str(results))
    by_date = sorted((json.loads(p.read_text()) for p in (results / "nvidia-h200").glob("*.json")
                      if p.name != "machine.json"), key=lambda d: d["date"])
    machine = "nvidia-h200"
    return conf, machine, by_date[-2]["commit_hash"], by_date[-1]["commit_hash"]


def asv_compare(conf, machine, base, head):
    return run_asv(conf, "compare", "--split", "--factor", "1.1", "--machine", machine, base, head).stdout


def test_pr_comment_from_a_real_comparison(real):
    conf, machine, base, head = real
    text = asv_compare(conf, machine, base, head)
    worse = [line for line in text.split("Benchmarks that have got worse:")[-1].splitlines()
             if line.startswith("| +") or line.startswith("| !")] if "got worse" in text else []
    info = compare.machine_info(machine, json.loads(Path(conf).read_text())["results_dir"])
    body = compare.comment(text, base[:8], head[:8], info, 1.1)
    assert body.startswith(compare.MARKER)
    assert f"`{machine}`" in body and info["gpu"] in body
    sections = compare.parse(text)
    assert len(sections["worse"]) == len(worse) > 0  # these two runs differ by more than 10% somewhere
    assert f"**{len(worse)} regressions**" in body
    # regressions come first, then improvements, then the unchanged ones folded away
    order = [body.index(h) for h in ("#### Regressions", "#### Improvements", "unchanged</summary>") if h in body]
    assert order == sorted(order) and len(order) >= 2
    for row in sections["worse"]:
        assert f"`{row[4]}`" in body.split("#### Improvements")[0]
    headers = sum(1 for key in compare.SECTIONS if key in text)  # one "| Change | ..." line per section
    assert sum(len(rows) for rows in sections.values()) == text.count("\n| ") - headers


def test_compare_exit_status_follows_the_regressions(real, tmp_path):
    conf, machine, base, head = real
    for a, b in ((base, head), (head, head)):
        saved = tmp_path / "compare.txt"
        saved.write_text(asv_compare(conf, machine, a, b))
        status = compare.main(["--format-only", str(saved), a[:8], b[:8], "--machine", machine])
        assert status == (1 if compare.parse(saved.read_text())["worse"] else 0)
    assert compare.parse(asv_compare(conf, machine, head, head))["worse"] == []  # a commit against itself


def test_regression_issue_from_the_published_dashboard(real):
    conf, machine, base, head = real
    subprocess.run([sys.executable, str(ROOT / "scripts" / "dashboard.py"), "publish", "--config", str(conf)],
                   check=True, capture_output=True)
    html = Path(conf).parent / "html"
    flagged = json.loads((html / "regressions.json").read_text())["regressions"]
    text, count = regression_issue.body(html)
    assert count == sum(len(entry[6]) for entry in flagged) > 0
    assert text.startswith(regression_issue.MARKER)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`bench_" in line]
    assert len(rows) == count
    for entry in flagged:
        assert any(f"`{entry[0]}`" in row for row in rows)
    assert all(machine in row for row in rows)


def test_comment_of_the_h200_slowdown_run():
    """The comparison on the H200 between main and a commit that slows Device.set_current
    (docs/compare-h200.md): asv's own output of that run, formatted as the PR job would."""
    text = (ROOT / "docs" / "compare-h200" / "asv-compare.txt").read_text()
    sections = compare.parse(text)
    worse = {row[4] for row in sections["worse"]}
    assert "bench_device.SetCurrent.time_set_current('core')" in worse
    assert not any("('bindings')" in name or "('cupy')" in name for name in worse)  # only cuda.core moved
    body = compare.comment(text, "main", "slowdown", compare.machine_info("nvidia-h200"), 1.1)
    assert f"**{len(worse)} regressions**" in body and "not measured on both sides" in body
    assert compare.main(["--format-only", str(ROOT / "docs/compare-h200/asv-compare.txt"), "main", "slowdown",
                         "--machine", "nvidia-h200"]) == 1


def test_fastest_sample_check_flags_only_the_slowed_call_in_the_h200_power_test():
    """measurements/nvidia-h200/power-8fd2b97: main against a commit that adds a Python-level check to
    Device.set_current, measured on the H200 with 4 interleaved rounds. The fastest-sample check flags
    SetCurrent('core') and nothing else as slower; asv's median comparison, on the same samples, did not."""
    power = ROOT / "measurements" / "nvidia-h200" / "power-8fd2b97"
    base = compare.fastest_samples(power, "nvidia-h200", "cb56ab9f")
    head = compare.fastest_samples(power, "nvidia-h200", "8fd2b97e")
    assert len(base) == len(head) == 24
    worse, better, same = compare.fastest_check(base, head, 1.1)
    assert [name for name, *_ in worse] == ["bench_device.SetCurrent.time_set_current('core')"]
    text = (power / "asv-compare.txt").read_text()
    assert compare.parse(text)["worse"] == []  # what asv's own verdict would have said
    assert compare.verdict(text, (worse, better, same)) == worse
    body = compare.comment(text, "cb56ab9f9", "8fd2b97e3", compare.machine_info("nvidia-h200", power), 1.1,
                           (worse, better, same))
    assert body == (power / "compare.md").read_text()  # the committed comment is this run's


@pytest.mark.parametrize("folder, head, flagged", [
    # one more check in Device.set_current (+26%): caught, with 7 cases the change cannot reach
    ("power-230377c", "230377c35acabe3f017a16ba2e3779ec5bf4f7f6", 8),
    # an empty commit on main: everything flagged is the machine (docs/measurement.md)
    ("aa-compare-b04e805", "b04e8052ac73627c6ca80d50028adcc02c88781b", 11),
    # the same pairs' kin under the reference clock: a +9% slowdown (two slot checks) and the empty commit
    ("power-e262d23-reference", "e262d239c78b6037a4dc0a0201ab5e57ac483631", 19),
    ("aa-compare-b04e805-reference", "b04e8052ac73627c6ca80d50028adcc02c88781b", 27),
])
def test_committed_comparisons_are_what_compare_makes_of_their_results(folder, head, flagged, tmp_path):
    """The full-suite comparisons of 2026-12-03 on the H200: the committed comment is what
    `scripts/compare.py --format-only` makes of asv's output and the recorded samples, and its exit status
    says "regression"."""
    run = ROOT / "measurements" / "nvidia-h200" / folder
    base = "cb56ab9f9ae3b4a0ef19666697336945925589a5"
    out = tmp_path / "comment.md"
    status = compare.main(["--format-only", str(run / "asv-compare.txt"), base, head, "--machine", "nvidia-h200",
                           "--results-dir", str(run), "--output", str(out)])
    assert status == 1
    assert out.read_text() == (run / "compare.md").read_text()
    worse, _, same = compare.fastest_check(compare.fastest_samples(run, "nvidia-h200", base),
                                           compare.fastest_samples(run, "nvidia-h200", head[:8]), 1.1)
    assert len(worse) == flagged and len(worse) + len(same) <= 90
    slowed = "bench_device.SetCurrent.time_set_current('core')"
    assert (slowed in {name for name, *_ in worse}) == folder.startswith("power")
