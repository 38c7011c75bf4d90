"""What the commands say and do on a machine without a GPU (this one, and CI's): the first line says so, in the
words of one rule (``suite.without_gpu``), for `init`, `run`, `compare`, plain `asv run` and `asv continuous`;
`window` and `bisect` build nothing; an estimate counts only the cases that run here; the gate names no over-C++
record or results folder a GPU-less machine never writes; the comment says which wheel a build took from the cache.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import ROOT

from cuda_bench import cli
from cuda_bench.commands import common
from cuda_bench.compare import comment, gate, onepass, paired, window
from cuda_bench.foundations import machine, suite
from cuda_bench.foundations.paths import ASV_DRIVEN
from cuda_bench.publish import asv_plugin
from cuda_bench.run import asvrun

FLOOR = "bench_harness.Floor.time_noop('noop')"  # the harness's own cost: no GPU needed
SET_CURRENT = "bench_device.SetCurrent.time_set_current('core')"  # needs one


@pytest.fixture(autouse=True)
def no_gpu():
    if machine.gpu_info():
        pytest.skip("this machine has a GPU")


def needing():
    """How many of the suite's cases need a GPU, by the suite's own account (each class's ``gpu_free``)."""
    found = suite.cases()
    return sum(map(suite.needs_gpu, found.values())), len(found)


def test_the_suite_says_which_cases_need_a_gpu_as_its_benchmarks_skip_them():
    """``needs_gpu`` reads what ``benchmarks._op.Op.setup`` reads to skip a case: its class's ``gpu_free``. The
    harness's floor, NVRTC's compiles and the pathfinder's lookups need none; a device call does."""
    found = suite.cases()
    assert not suite.needs_gpu(found[FLOOR]) and suite.needs_gpu(found[SET_CURRENT])
    assert not suite.needs_gpu(found["bench_program.Compile.time_compile('bindings', 'ptx')"])
    assert suite.needs_gpu(found["bench_program.GetKernel.time_get_kernel('core')"])
    assert not suite.needs_gpu(found["bench_coldstart.Import.time_import('core')"])
    assert suite.needs_gpu(found["bench_cpp.FirstContext.time_first_context('cpp')"])
    need, total = needing()
    assert 0 < need < total
    free = [name for name, case in found.items() if not suite.needs_gpu(case)]
    assert suite.running_here(list(found), {}) == free and suite.running_here(list(found), {"gpu": "x"}) == list(found)
    assert suite.counted(list(found), free) == f"{len(free)} of {total} cases (the others need a GPU)"


@pytest.mark.parametrize("command", ["window", "bisect"])
def test_window_and_bisect_without_a_gpu_say_so_in_their_first_line_and_build_nothing(
        command, git_repo, tmp_path, monkeypatch, capsys):
    """Nothing is built, installed or measured: the command stops at once (exit 3), its one line saying that
    there is no GPU, what it would need one for, and how to fill the wheel cache for a GPU machine instead."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for module, name in ((onepass, "measure_parts"), (gate, "environments"), (asvrun, "derived_conf")):
        monkeypatch.setattr(module, name, lambda *a, **k: pytest.fail("built or measured without a GPU"))
    revs = ["HEAD~1", "HEAD"] if command == "window" else ["HEAD~1", "HEAD", "-b", "Floor"]
    assert cli.main([command, *revs, "--repo", str(git_repo), "--out", str(tmp_path / "o")]) == 3
    err = capsys.readouterr().err.splitlines()
    need, total = needing()
    assert err == [f"bench: no GPU on this machine: {command} times cases on a GPU and builds nothing without one; "
                   "`cuda-bench prebuild REV ...` builds commits into the wheel cache here for a GPU machine "
                   f"({need} of the suite's {total} cases need one)"]
    assert not (tmp_path / "o").exists()


def test_init_run_and_compare_say_first_that_there_is_no_gpu_and_what_they_do_without_one(
        tmp_path, monkeypatch, capsys):
    """The same rule's words, first: `init` and `run` (asv's results outside the history), `compare` (the gate on
    what runs here, no budget judged). `run` stops on its missing clone after saying it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(asvrun, "write_local_settings", lambda settings: None)
    need, total = needing()
    assert cli.main(["init", "--machine", "probe"]) == 0
    first = capsys.readouterr().err.splitlines()[0]
    assert first == f"bench: {suite.without_gpu(common.OUTSIDE)}" and f"({need} of the suite's {total} " in first
    assert first.startswith("bench: no GPU on this machine: asv's results go to .asv/results-no-gpu, never results/")
    assert cli.main(["run", "--repo", str(tmp_path / "nowhere"), "--machine", "probe"]) == 3
    assert capsys.readouterr().err.splitlines()[0] == f"bench: {suite.without_gpu(common.OUTSIDE)}"
    assert cli.main(["compare", "main", "b", "--repo", str(tmp_path / "nowhere"), "--machine", "probe"]) == 3
    first = capsys.readouterr().err.splitlines()[0]
    assert first == f"bench: {suite.without_gpu(gate.WITHOUT_GPU)}"
    assert "no budget is judged (an over-C++ run needs one)" in first


def test_asv_run_and_continuous_say_it_in_the_same_words_and_not_again_under_a_cuda_bench_command(
        tmp_path, capsys, monkeypatch):
    """Plain `asv run` and `asv continuous` (the project's plugin): the same rule's line; `asv continuous`, which
    the paired engine decides, says what it times and that no budget is judged (never a results folder it does
    not write); under a cuda-bench command, which said it first, nothing."""
    def applied(name):
        conf = SimpleNamespace(repo="r", env_dir=str(tmp_path / "env"), results_dir=str(tmp_path / "results"),
                               benchmark_dir=str(ROOT / "benchmarks"))
        asv_plugin.apply_settings(name, conf, SimpleNamespace(machine=None), settings={}, gpu={})
        return capsys.readouterr().err.strip()

    monkeypatch.delenv(ASV_DRIVEN, raising=False)
    monkeypatch.delenv(asv_plugin.UNPAIRED, raising=False)
    said = applied("Run")
    assert said.startswith("cuda-bench: no GPU on this machine: results go to ") and "of the suite's" in said
    assert applied("Continuous") == f"cuda-bench: {suite.without_gpu(gate.WITHOUT_GPU)}"
    monkeypatch.setenv(ASV_DRIVEN, "1")
    assert applied("Run") == ""


def test_an_estimate_counts_only_the_cases_that_run_on_this_machine(tmp_path):
    """paired.run and window.run say how long they will take before they start: without a GPU, from the cases
    that run here alone, and how many of the asked-for cases those are."""
    def broken(*args, **kwargs):
        raise RuntimeError("no worker here")

    sides = [paired.Side(n, n, n * 40, "python") for n in ("a", "b")]
    said = []
    settings = paired.Settings(pairs=2, seconds=30.0)
    with pytest.raises(paired.WorkerError):
        paired.run(sides, [FLOOR, SET_CURRENT], settings, tmp_path, progress=said.append, cores=[0],
                   make_worker=broken)
    assert said[0].startswith("paired: 1 of 2 cases (the others need a GPU) x 2 process pairs, 1 at a time")
    assert said[0].endswith("(about 1.0 min)")  # one case x 2 pairs x 30 s, not two cases' 2.0 min
    said.clear()
    with pytest.raises(paired.WorkerError):
        window.run(sides, [FLOOR, SET_CURRENT], settings, tmp_path, progress=said.append, cores=[0],
                   make_worker=broken)
    assert said[0].startswith("window: 2 builds x 1 of 2 cases (the others need a GPU) x 2 process groups")
    assert said[0].endswith("(about 1.0 min)")


def test_the_comment_says_which_wheel_a_build_took_from_the_cache():
    """Two commits that share cuda_pathfinder's tree share its cached wheel, built at one of them: the base's
    line names the commit the wheel was built at, so that it never seems to hold the head's code."""
    base, head = "c278ecb3d" + "0" * 31, "cb56ab9f9" + "1" * 31
    data = {"base": base, "head": head}
    assert comment.version_text("1.3.5.dev427+gcb56ab9f9", base) == \
        "1.3.5.dev427+gcb56ab9f9 (the same tree's wheel, built at cb56ab9f9)"
    assert comment.version_text("1.3.5.dev427+gcb56ab9f9", head) == "1.3.5.dev427+gcb56ab9f9"
    assert comment.version_text("13.3.1", base) == "13.3.1"
    lines = comment.rest(data | {"settings": {"confidence": 0.95}, "cases": [], "errors": {}, "only": {},
                                 "skipped": {}}, [],
                         {"base": {"cuda-pathfinder": "1.3.5.dev427+gcb56ab9f9", "cuda-core": "0.5.1+gc278ecb3d"},
                          "head": {"cuda-pathfinder": "1.3.5.dev427+gcb56ab9f9"}})
    assert lines[-1] == ("Builds: base: cuda-core 0.5.1+gc278ecb3d, cuda-pathfinder 1.3.5.dev427+gcb56ab9f9 (the "
                         "same tree's wheel, built at cb56ab9f9); head: cuda-pathfinder 1.3.5.dev427+gcb56ab9f9")


def test_the_gate_without_a_gpu_looks_for_no_over_cpp_record_a_gpu_less_machine_never_writes(
        git_repo, tmp_path, monkeypatch, capsys):
    """`cuda-bench compare` and `asv continuous` judge budgets from over-C++ records, which only a GPU machine makes:
    without one the gate is given no such folder (so it names neither results/<machine>/ nor `cuda-bench over-cpp`,
    which needs a GPU too)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    asked = []

    def stopped(*args, **kwargs):
        asked.append(kwargs["over_cpp_dir"])
        raise gate.CompareError("stopped here")

    monkeypatch.setattr(gate, "gate", stopped)
    assert cli.main(["compare", "HEAD~1", "HEAD", "--repo", str(git_repo), "--machine", "probe"]) == 3
    conf = SimpleNamespace(repo=str(git_repo), project="p", matrix={}, env_dir=str(tmp_path / "env"))
    args = SimpleNamespace(branch="HEAD", base="HEAD~1", machine="probe", bench=[])
    assert asv_plugin.paired_continuous(conf, args) == 2
    assert asked == [None, None]
    assert "results/probe" not in capsys.readouterr().err
