"""What a GPU machine is asked to spend its time on: identical builds are never measured
(cuda_bench.build.trees.identity, cuda_bench.compare.steps, cuda-bench compare), and the plan (cuda_bench.compare.plan,
cuda-bench plan) lists what the history lacks, most valuable first, each part with an estimate, and runs what fits a
budget. On real git repositories shaped like cuda-python (its three package folders), with asv results files and step
records written as the tool writes them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import git, step_case, step_record

from cuda_bench import cli
from cuda_bench.build import carry, trees
from cuda_bench.compare import costs, gate, plan, steps
from cuda_bench.foundations import machine
from cuda_bench.foundations.paths import result_files
from cuda_bench.foundations.status import ERROR, INCOMPLETE, OK
from cuda_bench.publish import summary
from cuda_bench.results import history, records

MACHINE = "m"


def commit(repo, message, **files):
    """A commit of ``repo`` that writes ``files`` ({"cuda_core/x.pyx": text}); its SHA."""
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def monorepo(tmp_path):
    """cuda-python's shape, oldest first: 0 the three packages; 1 cuda_core changes; 2 docs only (an identical
    build to 1); 3 cuda_bindings changes; 4 cuda_pathfinder changes; 5 cuda_core changes (main's head). Returns
    (repo, [sha0 ... sha5])."""
    repo = tmp_path / "cuda-python"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    pyproject = 'cu13 = ["cuda-bindings==13.*"]\n'
    shas = [commit(repo, "packages", **{"cuda_pathfinder/p.py": "1", "cuda_bindings/b.pyx": "1",
                                         "cuda_core/c.pyx": "1", "cuda_core/pyproject.toml": pyproject})]
    shas.append(commit(repo, "core", **{"cuda_core/c.pyx": "2"}))
    shas.append(commit(repo, "docs", **{"README.md": "docs"}))
    shas.append(commit(repo, "bindings", **{"cuda_bindings/b.pyx": "2"}))
    shas.append(commit(repo, "pathfinder", **{"cuda_pathfinder/p.py": "2"}))
    shas.append(commit(repo, "core again", **{"cuda_core/c.pyx": "3"}))
    return repo, shas


def measured(results_dir, sha, date, bindings="source", cases=60, duration=0.5, site=None):
    """An asv results file of ``sha`` as asv writes one: ``cases`` cases measured, each taking ``duration`` s."""
    folder = Path(results_dir) / MACHINE
    folder.mkdir(parents=True, exist_ok=True)
    results = {f"bench_x.Op{i}.time_op": [1e-7, None, "v", 0, duration] for i in range(cases)}
    (folder / f"{sha[:8]}-env-{bindings}.json").write_text(json.dumps({
        "commit_hash": sha, "date": date, "env_name": f"env-{bindings}", "params": {},
        "env_vars": {"CUDA_BENCH_BINDINGS": bindings, **({"CUDA_BENCH_SYSTEM_SITE": site} if site else {})},
        "durations": {},
        "result_columns": ["result", "params", "version", "started_at", "duration"], "results": results}))


def conf(bindings="source"):
    return {"matrix": {"env": {"CUDA_BENCH_BINDINGS": [bindings]}}}


# --- identical builds --------------------------------------------------------------------------------------------
def test_identity_is_read_from_git_and_names_what_a_build_is_made_of(monorepo):
    repo, shas = monorepo
    source = [trees.identity(repo, sha, "source") for sha in shas]
    assert set(source[0]) == {"cuda_pathfinder", "cuda_bindings", "cuda_core"}
    assert trees.differs(source[0], source[1]) == ["cuda_core"]
    assert trees.differs(source[1], source[2]) == []  # a docs-only commit builds the same wheels
    assert trees.differs(source[2], source[3]) == ["cuda_bindings"]
    assert trees.differs(source[3], source[4]) == ["cuda_pathfinder"]
    # with a cuda-bindings wheel, the commit's cuda_bindings/ is not built: its change is not the build's
    wheel = [trees.identity(repo, sha, "13.3.1") for sha in shas]
    assert wheel[2]["cuda_bindings"] == "cuda-bindings==13.3.1" and trees.differs(wheel[2], wheel[3]) == []
    assert trees.identity(repo, shas[0], "auto")["cuda_bindings"] == "cuda-bindings==13.3.1"  # a cu13 extra
    # the wheel cache keys the build uses: cuda_core's names the bindings it was compiled against
    keys = dict(trees.cache_keys(repo, shas[3], "source"))
    assert keys["cuda_core"].endswith(f"-bindings{source[3]['cuda_bindings'][:12]}")
    assert keys["cuda_bindings"].startswith(source[3]["cuda_bindings"])


def test_a_step_between_identical_builds_is_recorded_without_measuring(monorepo, tmp_path, monkeypatch, capsys):
    """A docs-only commit and the one before it build the same wheels: the step between them is recorded as
    "identical builds", with what both are built from, and the paired engine never starts; a step whose builds
    differ is measured and says which packages differ."""
    repo, shas = monorepo
    asked = []

    def measure(repo_, base, head, **kw):
        asked.append((base, head))
        raise gate.CompareError("measured")

    monkeypatch.setattr(gate, "measure", measure)
    monkeypatch.setattr(steps, "WORK", tmp_path / "work")
    status = steps.make([steps.Step(shas[1], shas[2], "source"), steps.Step(shas[2], shas[3], "source")],
                        conf={"repo": str(repo)}, machine_name=MACHINE, info={}, results_dir=tmp_path / "res",
                        settings=None, command="cuda-bench steps", later="cuda-bench steps")
    assert asked == [(shas[2], shas[3])]  # only the step whose builds differ reaches the engine
    assert status == INCOMPLETE  # that one could not be measured here
    (record,) = records.read(tmp_path / "res" / MACHINE, "step")
    assert (record["base"], record["head"], record["identical"], record["cases"]) == (shas[1], shas[2], True, [])
    assert record["built_from"]["base"] == record["built_from"]["head"] == trees.identity(repo, shas[1], "source")
    assert record["packages_changed"] == [] and record["seconds"] == 0
    assert "identical builds" in capsys.readouterr().err
    # it fills the history's gap, and a chain through it is ×1 exactly
    step = history.steps(tmp_path / "res", MACHINE)[0]
    after = step_record(base=shas[2], head="f" * 40, bindings="source",
                        cases=[{"name": "any", "ratio": 2.0, "low": 1.9, "high": 2.1, "verdict": "regression"}])
    chain = history.chains([step, after], [shas[1], shas[2], "f" * 40])["any"]["built from the commit"]
    assert history.identical(step) and chain[shas[2]] == (1.0, 1.0, 1.0, shas[1], 1)
    assert summary.counts(step)["identical"]


def test_the_pull_request_gate_says_identical_builds_and_measures_nothing(monorepo, tmp_path, monkeypatch, capsys):
    repo, shas = monorepo
    monkeypatch.setattr(gate, "measure", lambda *a, **k: pytest.fail("identical builds were measured"))
    monkeypatch.setenv("HOME", str(tmp_path))
    out = tmp_path / "out"
    status = cli.main(["compare", shas[1], shas[2], "--repo", str(repo), "--machine", MACHINE, "--out", str(out)])
    data = json.loads((out / "summary.json").read_text())
    assert status == OK and data["identical"] and data["cases"] == []
    text = (out / "summary.md").read_text()
    assert "**Identical builds: nothing measured.**" in text and "the same: `cuda_pathfinder`" in text
    assert "identical builds" in capsys.readouterr().err


# --- the plan ----------------------------------------------------------------------------------------------------
def planner(repo, results_dir, cache, **kw):
    cost = plan.Costs({"asv": 1.0, "step": 2.0, "window": 1.0, "counts": 0.5},
                      {"asv": "t", "step": "t", "window": "t", "counts": "t"}, 100, 16)
    return plan.Planner(repo, results_dir, MACHINE, conf(), window=6, cost=cost, cache=cache, **kw)


def test_the_plan_puts_mains_head_first_then_gaps_then_unmeasured_commits(monorepo, tmp_path, monkeypatch):
    repo, shas = monorepo
    res, cache = tmp_path / "res", tmp_path / "cache"
    monkeypatch.setattr(plan.asvrun, "release_ladder", lambda repo, branch: [])
    # nothing measured: main's head and the commits before it, a block's builds but one, in one pass; then the rest
    items = planner(repo, res, cache).items()
    assert [(i.kind, i.args) for i in items] == [("head", ["window", *shas[1:]]), ("window", ["window", shas[0]])]
    # per case and build (1 -> 2 is an identical build: four builds), plus its environments; each new commit counted
    # per case and build, and each build's cold starts
    assert items[0].parts["window"] == 4 * (100 + plan.COLD_STARTS) + plan.OVERHEAD["window"]
    assert items[0].parts["counts"] == 5 * 50
    # builds: what the (empty) cache lacks, each once: 3 packages of the head, cuda_core of 4 (against the head's
    # bindings), cuda_pathfinder of 3, cuda_bindings and cuda_core of 2 (1 is 2's build)
    assert items[0].parts["builds"] == sum(plan.DEFAULTS["build"][p] for p in trees.PACKAGES) + \
        2 * plan.DEFAULTS["build"]["cuda_core"] + plan.DEFAULTS["build"]["cuda_bindings"] + \
        plan.DEFAULTS["build"]["cuda_pathfinder"]
    assert "main's head" in items[0].what and "4 builds" in items[0].what
    assert "window" not in items[1].parts  # alone, with nothing measured beside it: planned again once 1 is

    # measured 0, 1, 3 and 5 (the head), with a step 3 -> 5 only: gaps 0 -> 1 and 1 -> 3, newest first; then the
    # unmeasured commits 4 and 2, each with the measured commits around it; then the counts nothing made
    for i in (0, 1, 3, 5):
        measured(res, shas[i], i)
    records.append(res / MACHINE, "step", step_record(base=shas[3], head=shas[5], bindings="source"))
    items = planner(repo, res, cache).items()
    assert [(i.kind, i.commits) for i in items] == [
        ("gap", [shas[1], shas[3]]), ("gap", [shas[0], shas[1]]),
        ("window", [shas[4]]), ("window", [shas[2]]),
        *[("counts", [shas[i]]) for i in (5, 3, 1, 0)]]
    assert items[0].args == ["steps", "--pair", shas[1], shas[3]]
    assert f"with {shas[3][:9]} and {shas[5][:9]}" in items[2].what
    # commit 2 sits between 1 and 3: 1 -> 2 are identical builds, so its pass times two builds
    assert items[3].parts["window"] == 2 * (100 + plan.COLD_STARTS) + plan.OVERHEAD["window"]
    # a cache that holds every wheel: no builds in any estimate
    fill(cache, repo, shas)
    assert not any("builds" in i.parts for i in planner(repo, res, cache).items())


def fill(cache, repo, shas):
    """A wheel cache that holds every wheel ``shas`` build (with bindings from source)."""
    for sha in shas:
        for package, key in trees.cache_keys(repo, sha, "source"):
            (cache / package / key).mkdir(parents=True, exist_ok=True)
            (cache / package / key / f"{package}-1-py3-none-any.whl").write_text("")


def test_costs_come_from_the_machines_own_records(tmp_path):
    res = tmp_path / "res"
    measured(res, "a" * 40, 0, cases=60, duration=0.8)
    measured(res, "b" * 40, 1, cases=60, duration=1.2)
    measured(res, "c" * 40, 2, cases=3, duration=9.0)  # a partial run says little: left out
    cases = [step_case(f"c{i}") for i in range(60)]
    records.append(res / MACHINE, "step", step_record(seconds=120.0, cases=cases))
    cost = plan.costs(res, MACHINE, cases=100, cores=16)
    assert cost.per_case == {"asv": pytest.approx(1.0), "step": pytest.approx(2.0),
                             "window": plan.DEFAULTS["window"], "counts": plan.DEFAULTS["counts"]}
    assert cost.sources == {"asv": "m's records", "step": "m's records", "window": "default", "counts": "default"}
    # a window's block of three builds, 270 s for its 60 cases, said by both its steps: 1.5 s per case and build
    # (its steps' own seconds, their shares, are not a paired step's); the step before it still says 2.0
    block = {"commits": ["a", "b", "c"], "block": ["a", "b", "c"], "seconds": 270.0}
    for base, head in (("a", "b"), ("b", "c")):
        records.append(res / MACHINE, "step", step_record(base=base * 40, head=head * 40, seconds=135.0, cases=cases,
                                                          window=block))
    cost = plan.costs(res, MACHINE, cases=100, cores=16)
    assert cost.per_case["window"] == pytest.approx(1.5) and cost.per_case["step"] == pytest.approx(2.0)
    assert cost.part("window") == 150
    assert cost.part("step") == 200 and cost.build("cuda_core") == plan.DEFAULTS["build"]["cuda_core"]
    assert plan.costs(res, MACHINE, cases=100, cores=2).build("cuda_core") == plan.DEFAULTS["build"]["cuda_core"] * 8


def test_a_window_that_timed_the_cold_starts_has_them_taken_out_of_its_per_case_figure(tmp_path):
    """A window's cold starts cost a build about COLD_STARTS seconds whatever the suite's size (the first contexts
    run one at a time): a block that timed them gives the same per-case figure as one that did not, once they are
    taken out, and every window's estimate adds them per build."""
    cases = [step_case(f"c{i}") for i in range(60)]
    block = {"commits": ["a", "b", "c"], "block": ["a", "b", "c"], "seconds": 270.0}
    without, cold = tmp_path / "without", tmp_path / "cold"
    records.append(without / MACHINE, "step", step_record(seconds=135.0, cases=cases, window=block))
    with_cold = [*cases[:-1], step_case("bench_coldstart.FirstContext.time_first_context('core')")]
    records.append(cold / MACHINE, "step", step_record(seconds=135.0, cases=with_cold,
                                                       window=block | {"seconds": 270.0 + 3 * plan.COLD_STARTS}))
    figures = [plan.costs(res, MACHINE, cases=100, cores=16) for res in (without, cold)]
    assert [f.per_case["window"] for f in figures] == [pytest.approx(1.5)] * 2
    assert figures[1].window(3) == pytest.approx(3 * (150 + plan.COLD_STARTS))


def gaps_to_fill(repo, shas, res, monkeypatch, slower=1.1):
    """A history with two gaps (1 -> 3, 0 -> 1), and a run_one that fills what it runs, taking ``slower`` times
    its estimate; the list of what it ran."""
    monkeypatch.setattr(plan.asvrun, "release_ladder", lambda repo, branch: [])
    for i in (0, 1, 3, 5):
        measured(res, shas[i], i)
    records.append(res / MACHINE, "step", step_record(base=shas[3], head=shas[5], bindings="source"))
    ran, now = [], [0.0]

    def run_one(item):
        ran.append(item.args)
        now[0] += item.seconds * slower
        if item.kind == "gap":
            records.append(res / MACHINE, "step", step_record(base=item.commits[0], head=item.commits[1],
                                                              bindings="source"))
        return 0
    return ran, now, run_one


def test_a_run_that_takes_longer_than_estimated_expects_the_rest_to(monorepo, tmp_path, monkeypatch):
    """The second gap's 225 s fit in the 255 s left, but the first took ×1.1 its estimate: so would it, and it
    is not started."""
    repo, shas = monorepo
    res, cache = tmp_path / "res", tmp_path / "cache"
    ran, now, run_one = gaps_to_fill(repo, shas, res, monkeypatch)
    fill(cache, repo, shas)
    said = []
    record = plan.execute(planner(repo, res, cache), 480, run_one, progress=said.append, clock=lambda: now[0])
    assert ran == [["steps", "--pair", shas[1], shas[3]]] and len(record["done"]) == 1
    assert record["left"][0]["args"] == ["steps", "--pair", shas[0], shas[1]]


def test_a_run_takes_the_parts_that_fit_and_plans_again_after_each(monorepo, tmp_path, monkeypatch):
    """execute() runs the most valuable part while it fits in what is left of the budget, plans again (the part may
    have made another moot), stops at the first part too large for what is left (a smaller, less valuable one
    after it waits), and records each part's estimate beside the time it took."""
    repo, shas = monorepo
    res, cache = tmp_path / "res", tmp_path / "cache"
    ran, now, run_one = gaps_to_fill(repo, shas, res, monkeypatch)  # each part taking 10 % more than estimated
    fill(cache, repo, shas)
    found = planner(repo, res, cache)
    # gap steps cost 225 s each, then commit 4 far more: 500 s take both gaps (495 s with the 10 %) and stop there,
    # though a 50 s count would fit
    record = plan.execute(found, 500, run_one, progress=lambda m: None, clock=lambda: now[0])
    assert ran == [["steps", "--pair", shas[1], shas[3]], ["steps", "--pair", shas[0], shas[1]]]
    assert [(d["estimate"], d["seconds"]) for d in record["done"]] == [(225, 247.5), (225, 247.5)]
    assert all(d["status"] == 0 for d in record["done"]) and record["seconds"] == 495
    assert [left["kind"] for left in record["left"]] == ["window", "window", "counts", "counts", "counts", "counts"]
    assert record["budget"] == 500


def test_plan_lists_on_a_machine_without_a_gpu_and_will_not_run_there(monorepo, tmp_path, monkeypatch, capsys):
    repo, shas = monorepo
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(machine, "has_gpu", lambda info: False)
    argv = ["plan", "--repo", str(repo), "--machine", MACHINE, "--window", "6"]
    assert cli.main(argv) == OK
    out = capsys.readouterr().out
    assert f"[head] main's head {shas[1][:9]}..{shas[5][:9]} (5 commits) measured in one pass" in out
    assert f"cuda-bench window {' '.join(shas[1:])}" in out and "in all about" in out
    assert cli.main([*argv, "--run"]) == ERROR
    assert "holds GPU runs only" in capsys.readouterr().err
    assert not list(result_files(tmp_path / "res" / MACHINE))


def test_plan_read_elsewhere_takes_the_history_in_the_environment_it_was_measured_in(monorepo, tmp_path,
                                                                                    monkeypatch, capsys):
    """The GPU box measured with its system site (CUDA_BENCH_SYSTEM_SITE), a folder this machine lacks: the
    plan read here takes the history's site, so the commits measured there are not planned again."""
    repo, shas = monorepo
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(machine, "has_gpu", lambda info: False)
    res = tmp_path / "history"
    for i, sha in enumerate(shas[1:]):
        measured(res, sha, 1000 + i, site="/opt/gpu-box/site-packages")
    argv = ["plan", "--repo", str(repo), "--machine", MACHINE, "--window", "6", "--results-dir", str(res)]
    assert cli.main(argv) == OK
    out, err = capsys.readouterr()
    assert "with the system site /opt/gpu-box/site-packages" in err
    planned = [line for line in out.splitlines() if "[window]" in line]
    assert [line for line in planned if shas[0][:9] in line] and len(planned) == 1, out  # the one not measured
    assert f"with {shas[1][:9]}" in planned[0]  # paired with the measured commit after it


def test_each_part_of_the_history_that_cannot_be_read_is_named_once_however_often_it_is_read(monorepo, tmp_path,
                                                                                          monkeypatch, capsys):
    """`cuda-bench plan` reads the steps and the results files several times (the gaps, the costs, the parts): a
    steps line and a results file that cannot be read are each named once, where first met, and the command ends
    with one line counting them and exits 2."""
    repo, shas = monorepo
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(machine, "has_gpu", lambda info: False)
    res = tmp_path / "history"
    for i, sha in enumerate(shas[1:4]):
        measured(res, sha, 1000 + i)
    cut = res / MACHINE / f"{shas[4][:8]}-env-source.json"
    cut.write_text('{"commit_hash": "')
    steps = res / MACHINE / "steps.jsonl"
    steps.write_text('{"base": "cut off\n')
    argv = ["plan", "--repo", str(repo), "--machine", MACHINE, "--window", "6", "--results-dir", str(res)]
    assert cli.main(argv) == INCOMPLETE
    err = capsys.readouterr().err
    assert err.count(f"{steps}:1: does not parse") == 1 and err.count(f"skipping {cut}") == 1, err
    assert err.splitlines()[-1] == ("bench: 2 part(s) of the history could not be read (each named above), and what "
                                    "this command said leaves them out")


@pytest.mark.slow
def test_asv_continuous_typed_as_it_is_decides_by_the_paired_engine(monorepo, tmp_path):
    """`asv continuous BASE HEAD` through real asv and the project's plugin: the paired engine decides, not asv's one
    unpaired run per commit. Between a docs-only commit and the one before it that is "identical builds", exit 0,
    and asv never builds or runs a benchmark; a revision the clone does not have is one line and exit 2."""
    from conftest import asv_conf, run_asv

    repo, shas = monorepo
    conf = asv_conf(tmp_path, repo, sys.executable)
    same = run_asv(conf, "continuous", shas[1], shas[2], "--machine", MACHINE, check=False)
    assert same.returncode == 0, same.stderr[-3000:]
    assert "decided by the paired engine" in same.stderr and "identical builds" in same.stderr
    assert "**Identical builds: nothing measured.**" in same.stdout
    assert "BENCHMARKS" not in same.stdout and not (tmp_path / "env").exists()  # asv built and ran nothing
    assert (tmp_path / "continuous" / f"{shas[1]}-{shas[2]}" / "summary.json").exists()
    missing = run_asv(conf, "continuous", shas[2], "no-such-branch", "--machine", MACHINE, check=False)
    assert missing.returncode == 2 and "not measured" in missing.stderr and "no-such-branch" in missing.stderr, \
        missing.stderr[-3000:]


def test_a_release_step_across_a_bindings_change_is_planned_with_one_bindings_and_that_step_judges(tmp_path):
    """v0.1.0 (cu12 only) → v0.2.0 (cu12 and cu13) ran 12.9.10 against 13.3.1 (``auto``). The plan asks for
    the same two releases with 12.9.10 on both sides, which both declare; not for v0.1.0 → v0.3.0 (cu13 only),
    which cannot run 12.9.10. Once that step exists, it judges the releases: the step across the change is
    context, its flags count nowhere, and the plan asks no more."""
    repo = tmp_path / "cuda-python"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    both = 'cu12 = ["cuda-bindings==12.*"]\ncu13 = ["cuda-bindings==13.*"]\n'
    shas = [commit(repo, "0.1.0", **{"cuda_core/pyproject.toml": 'cu12 = ["cuda-bindings==12.*"]\n',
                                     "cuda_core/c.pyx": "1", "cuda_bindings/b.pyx": "1"}),
            commit(repo, "0.2.0", **{"cuda_core/pyproject.toml": both, "cuda_core/c.pyx": "2"}),
            commit(repo, "0.3.0", **{"cuda_core/pyproject.toml": 'cu13 = ["cuda-bindings==13.*"]\n'})]
    for sha, tag in zip(shas, ("cuda-core-v0.1.0", "cuda-core-v0.2.0", "cuda-core-v0.3.0"), strict=True):
        git(repo, "tag", tag, sha)
    res = tmp_path / "res"
    across = {"base": {"cuda-bindings": "12.9.10"}, "head": {"cuda-bindings": "13.3.1"}}
    flag = step_case("bench_x.Op.time_op('core')", ratio=1.2, low=1.15, high=1.25, verdict="regression")
    for head in shas[1:]:
        records.append(res / MACHINE, "step", step_record(base=shas[0], head=head, bindings="auto",
                                                          versions=across, cases=[flag]))
    found = planner(repo, res, tmp_path / "cache").one_bindings(set(shas))
    assert [(i.kind, i.args, i.commits) for i in found] == [
        ("release", ["run", f"{shas[0]}^!", f"{shas[1]}^!", "--bindings", "12.9.10"], shas[:2])]
    assert set(found[0].parts) >= {"asv", "steps"}
    steps_ = history.steps(res, MACHINE)
    assert len(history.flagged_steps(steps_)) == 2  # no twin yet: the step across the change judges
    # the step with 12.9.10 on both sides: it judges v0.1.0 -> v0.2.0 (the same), the other is context
    same = {"base": {"cuda-bindings": "12.9.10"}, "head": {"cuda-bindings": "12.9.10"}}
    records.append(res / MACHINE, "step", step_record(
        base=shas[0], head=shas[1], bindings="12.9.10", versions=same,
        cases=[step_case("bench_x.Op.time_op('core')", ratio=1.0, low=0.99, high=1.01, verdict="same")]))
    steps_ = history.steps(res, MACHINE)
    twin = history.twin(next(s for s in steps_ if s["bindings"] == "auto" and s["head"] == shas[1]), steps_)
    assert twin is not None and twin["bindings"] == "12.9.10"
    assert [(s["head"], c["name"]) for s, c in history.flagged_steps(steps_)] == [(shas[2], flag["name"])]
    known = {sha: {"tags": [tag], "title": tag, "date": 0} for sha, tag in
             zip(shas, ("cuda-core-v0.1.0", "cuda-core-v0.2.0", "cuda-core-v0.3.0"), strict=True)}
    ladder = summary.releases(steps_, known)["ladder"]
    assert [(d["head"], d["step"]["bindings"], bool(d["across"])) for d in ladder] == [
        (shas[2], "auto", False), (shas[1], "12.9.10", True)]
    assert ladder[1]["across"]["counts"]["regression"] == 1
    assert planner(repo, res, tmp_path / "cache").one_bindings(set(shas)) == []


def test_the_plans_wheels_go_in_batches_that_each_fit_one_call(monorepo, tmp_path, monkeypatch):
    """A GPU machine without network takes the wheels of a part in one call of at most so many bytes: the batches
    follow the plan's order, count a wheel two parts share once, start anew when the next part's wheels would not
    fit, and name the wheels this machine's cache lacks (those the GPU machine would build)."""
    repo, shas = monorepo
    res, cache = tmp_path / "res", tmp_path / "cache"
    monkeypatch.setattr(plan.asvrun, "release_ladder", lambda repo, branch: [])
    sizes = {"cuda_bindings": 600_000, "cuda_core": 300_000, "cuda_pathfinder": 10_000}
    for sha in shas:
        for package, key in trees.cache_keys(repo, sha, "source"):
            (cache / package / key).mkdir(parents=True, exist_ok=True)
            (cache / package / key / f"{package}-1-py3-none-any.whl").write_bytes(b"w" * sizes[package])
    for i in (0, 1, 3, 5):
        measured(res, shas[i], i)
    records.append(res / MACHINE, "step", step_record(base=shas[3], head=shas[5], bindings="source"))
    items = planner(repo, res, cache).items()  # gaps 1 -> 3, 0 -> 1; windows 3 4 5 and 1 2 3; counts 5, 3, 1, 0
    # 2.5 MB take every part: the gaps' four commits 2.11 MB (two bindings trees, three cuda_core, one pathfinder),
    # the window 3 4 5 adds 4's and 5's pathfinder and 5's cuda_core, and the rest shares what is there
    (whole,) = carry.batches(items, repo, "source", 2_500_000, cache)
    assert whole["items"] == list(range(1, 9)) and whole["bytes"] == 2 * 600_000 + 4 * 300_000 + 2 * 10_000
    assert whole["commits"] == {"source": [shas[1], shas[3], shas[0], shas[4], shas[5], shas[2]]}
    # 2 MB: the first gap alone takes 1.81 MB, and a part whose wheels would not fit starts the next batch
    found = carry.batches(items, repo, "source", 2_000_000, cache)
    assert [b["items"] for b in found] == [[1], [2], [3], [4], [5, 6], [7, 8]]
    assert [b["bytes"] for b in found] == [1_810_000, 1_210_000, 1_220_000, 1_810_000, 1_220_000, 1_210_000]
    assert not any(b["missing"] for b in found)
    assert "batch 5: items 5, 6, 1.2 MiB" in "\n".join(carry.batch_lines(found, 2_000_000))
    # 1 MB: no part fits one call whole; the first gap's two commits go in two calls, the first carrying only
    split = carry.batches(items, repo, "source", 1_000_000, cache)
    assert [(b["items"], b["part"]) for b in split[:2]] == [([1], (1, 2)), ([1], (2, 2))]
    assert [b["commits"]["source"] for b in split[:2]] == [[shas[1]], [shas[3]]]
    assert all(b["bytes"] <= 1_000_000 for b in split)
    said = "\n".join(carry.batch_lines(split, 1_000_000))
    assert "batch 1: item 1 (part 1 of 2: carried only)" in said and "batch 2: item 1 (part 2 of 2: the call" in said
    # a wheel the cache lacks is named, as what the GPU machine builds
    for entry in (cache / "cuda_core").iterdir():
        for wheel in entry.glob("*.whl"):
            wheel.unlink()
    assert all(any(m.startswith("cuda_core/") for m in b["missing"]) for b in carry.batches(items, repo, "source",
                                                                                          2_000_000, cache))


def test_the_plan_looks_for_the_wheels_of_the_python_the_machine_runs(monorepo, tmp_path, monkeypatch):
    """Planned on a host whose Python is not the GPU machine's (a 2-core box preparing a lease): the wheel cache's
    keys name the interpreter, so the plan takes the machine's Python from its newest asv results. A cache that
    holds the machine's wheels leaves no build in any part and none missing from the carried batches; one that
    holds only this interpreter's wheels leaves them all to build there."""
    repo, shas = monorepo
    res, cache = tmp_path / "res", tmp_path / "cache"
    monkeypatch.setattr(plan.asvrun, "release_ladder", lambda repo, branch: [])
    theirs = "3.9" if sys.version_info[:2] != (3, 9) else "3.8"
    for i in (0, 1, 3, 5):
        measured(res, shas[i], i)
    for path in (res / MACHINE).glob("*.json"):
        data = json.loads(path.read_text())
        path.write_text(json.dumps(data | {"params": {"python": theirs}}))

    def filled(python):
        shutil.rmtree(cache, ignore_errors=True)
        for sha in shas:
            for package, key in trees.cache_keys(repo, sha, "source", python):
                (cache / package / key).mkdir(parents=True, exist_ok=True)
                (cache / package / key / f"{package}-1-py3-none-any.whl").write_bytes(b"w")
        made = planner(repo, res, cache)
        items = made.items()
        return made.python, items, carry.batches(items, repo, "source", 10**9, cache, python=made.python)

    python, items, batches = filled(theirs)
    assert python == theirs and trees.python_tag(theirs).startswith(f"cp{theirs.replace('.', '')}-")
    assert not any("builds" in i.parts for i in items) and not any(b["missing"] for b in batches)
    _, items, batches = filled(None)  # this interpreter's wheels: not the machine's
    assert any("builds" in i.parts for i in items) and all(b["missing"] for b in batches)


def test_within_a_call_limit_a_window_is_cut_to_its_newest_commits_that_fit_and_the_next_part_is_said(
        monorepo, tmp_path, monkeypatch):
    """A call of 600 s, its parts ending 30 s inside: main's head and the four commits before it (five commits,
    680 s) do not fit; its newest three (3, 4, 5: three builds and their counts, 480 s) do, and run. The rest (0, 1,
    2, paired with 3) is what a next call starts with, and the plan says so. (The windows' cold starts are left out
    here: the seconds are the per-case figure's.)"""
    repo, shas = monorepo
    res, cache = tmp_path / "res", tmp_path / "cache"
    monkeypatch.setattr(plan.asvrun, "release_ladder", lambda repo, branch: [])
    monkeypatch.setattr(costs, "COLD_STARTS", 0.0)
    fill(cache, repo, shas)
    ran, now, said = [], [0.0], []

    def run_one(item):
        ran.append(item.args)
        now[0] += item.seconds
        for sha in item.commits:  # as a window keeps them: each commit, each adjacent pair's step
            measured(res, sha, shas.index(sha))
        for base, head in zip(item.needs, item.needs[1:]):
            records.append(res / MACHINE, "step", step_record(base=base, head=head, bindings="source"))
        return 0

    assert planner(repo, res, cache).items()[0].seconds == 680
    record = plan.execute(planner(repo, res, cache), 25 * 60, run_one, progress=said.append, clock=lambda: now[0],
                          call_limit=600)
    assert ran == [["window", *shas[3:]]] and record["done"][0]["estimate"] == 480
    assert record["next"]["args"] == ["window", *shas[:3]] and record["next"]["estimate"] <= 600 - plan.MARGIN
    assert said[-1].startswith(f"plan: next: [window] main's {shas[0][:9]}..{shas[2][:9]} (3 commits)")
    # what was spent before the plan started (the call's own set-up) counts against the limit
    ran.clear()
    now[0] = 0.0
    plan.execute(planner(repo, tmp_path / "empty", cache), 25 * 60, run_one, progress=said.append,
                 clock=lambda: now[0], call_limit=600, spent=200)
    assert ran == [["window", *shas[4:]]]


def test_a_part_faster_than_estimated_does_not_make_the_next_one_expected_faster(monorepo, tmp_path, monkeypatch):
    """The first gap (225 s estimated) took half that: the second's 225 s still do not fit in the 187.5 s left."""
    repo, shas = monorepo
    res, cache = tmp_path / "res", tmp_path / "cache"
    ran, now, run_one = gaps_to_fill(repo, shas, res, monkeypatch, slower=0.5)
    fill(cache, repo, shas)
    plan.execute(planner(repo, res, cache), 300, run_one, progress=lambda m: None, clock=lambda: now[0])
    assert ran == [["steps", "--pair", shas[1], shas[3]]]


def test_the_plans_windows_make_no_instruction_pass_its_estimates_do_not_hold():
    """A part the plan runs is priced without the instruction pass (`cuda-bench counts` makes it), so the windows,
    runs and ladders it starts are told to leave it out, and to leave out the counting pass with --no-counts."""
    from types import SimpleNamespace

    from cuda_bench.commands import plan as command

    args = SimpleNamespace(repo=None, machine="m", system_site=None, results_dir=None, bindings=None, cupti=[],
                           no_counts=True)
    for name in ("window", "run", "ladder"):
        assert {"--no-instructions", "--no-counts"} <= set(command.shared(args, name))
    assert "--no-instructions" not in command.shared(args, "counts")
