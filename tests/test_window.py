"""One pass over a window of commits (cuda_bench.compare.window), on the scripted machine of test_paired (a core that
runs at full or half speed for hundreds of milliseconds at a time, a process offset per worker) and on the
sawtooth clock that drifts inside every round: every commit timed once, each adjacent pair judged as a paired step
judges it, and what the window records read as the history reads steps."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

import pytest
from test_paired import CASES, HARD, HARD_INJECTED, INJECTED, Core, Sawtooth, ScriptedWorker

from cuda_bench.compare import gate, keep, onepass, paired, summaries, window
from cuda_bench.foundations import stats
from cuda_bench.results import records


class Logged(ScriptedWorker):
    """A scripted worker that writes its side's name into a log shared by its process group, per sample."""

    def __init__(self, name, core, costs, offset, log):
        super().__init__(name, core, costs, offset)
        self.log = log

    def sample(self, calls):
        self.log.append(self.side.name)
        return super().sample(calls)


def scripted_window(costs_per_side, cases, pairs=10, seconds=0.1, seed=1, clock=Core, log=None, offsets=None):
    """``window.measure_case`` over ``pairs`` process groups on the scripted machine, one core each: {case:
    [per group outcome]}. ``costs_per_side``: each build's cost table, oldest first."""
    rng = random.Random(seed)
    settings = paired.Settings(pairs=pairs, seconds=seconds)
    found = {name: [] for name in cases}
    for group in range(pairs):
        core = clock(seed * 1000 + group)
        shared = [] if log is None else log
        workers = [Logged(f"commit{k}", core, costs, (offsets or {}).get((group, k), rng.gauss(1, 0.002)), shared)
                   for k, costs in enumerate(costs_per_side)]
        for name in cases:
            found[name].append(window.measure_case(workers, name, settings, random.Random(group), now=core.seconds))
    return found


def judged(found, i, threshold=0.01):
    """The adjacent pair (i, i + 1) of a scripted window, judged as paired.run judges a step: {case: CaseResult}."""
    return {name: stats.analyse(name, [window.pair_outcome(o, i, i + 1)[1:] for o in outcomes], threshold)
            for name, outcomes in found.items()}


def slowed(costs, name, factor):
    return dict(costs, **{name: costs[name] * factor})


def test_an_aa_window_reads_one_at_every_step_and_flags_nothing():
    found = scripted_window([CASES] * 5, CASES)
    for i in range(4):
        for name, case in judged(found, i).items():
            assert case.verdict == "same", (i, name, case)
            assert abs(case.ratio - 1) < 0.005, (i, name, case)


def test_a_slowdown_in_the_middle_of_the_window_is_flagged_at_its_step_alone():
    """Commits 3 and later take 3% longer on one call: the step 2 -> 3 flags it, with the ratio near 1.03, and no
    other step flags anything."""
    slow = slowed(CASES, INJECTED, 1.03)
    found = scripted_window([CASES, CASES, CASES, slow, slow, slow], CASES)
    flagged = {i: [n for n, c in judged(found, i).items() if c.verdict != "same"] for i in range(5)}
    assert flagged == {0: [], 1: [], 2: [INJECTED], 3: [], 4: []}
    assert 1.025 < judged(found, 2)[INJECTED].ratio < 1.035


def test_each_round_is_a_shuffled_order_and_its_reverse_after_one_warm_sample_each():
    log = []
    found = scripted_window([CASES] * 4, [INJECTED], pairs=1, seconds=0.01, log=log)
    (outcome,) = found[INJECTED]
    rounds = outcome[3]
    timed = log[len(log) - 8 * len(rounds):]
    assert sorted(log[len(log) - 8 * len(rounds) - 4:len(log) - 8 * len(rounds)]) == [f"commit{k}" for k in range(4)]
    orders = [timed[i:i + 8] for i in range(0, len(timed), 8)]
    assert all(o[:4] == o[4:][::-1] and sorted(o[:4]) == [f"commit{k}" for k in range(4)] for o in orders)
    assert len({tuple(o[:4]) for o in orders}) > 1  # shuffled, not one fixed order
    # every side's two samples of a round sit at the same mean position: a linear drift cancels
    assert len(rounds) >= 3 and all(len(row) == 4 and all(s is not None for s in row) for row in rounds)


def test_a_clock_that_drifts_inside_rounds_cancels_only_because_each_round_is_a_palindrome(monkeypatch):
    """On the sawtooth clock (a linear drift inside every round, state switches inside rounds) an A/A window of 4
    reads within 1% of 1 at every step and flags nothing. With the second half of each round in the same order as
    the first instead of reversed, the drift reads as a change between commits that sit apart in the order."""
    found = scripted_window([HARD] * 4, HARD, pairs=20, seconds=0.1, clock=Sawtooth)
    for i in range(3):
        for name, case in judged(found, i).items():
            assert case.verdict == "same" and abs(case.ratio - 1) < 0.01, (i, name, case)

    def same_order(workers, answers, settings, rng, now, clock):  # the rule this test guards, put back wrong
        order = list(range(len(workers)))
        calls = paired.calls_per_sample(workers[0], settings)
        rounds = []
        end = now() + settings.seconds * len(workers) / 2
        while len(rounds) < 3 or now() < end:
            first = [workers[i].sample(calls) for i in order]
            second = [workers[i].sample(calls) for i in order]
            rounds.append([(first[k], second[k]) for k in order])
        return ("ok", calls, [("ok",)] * len(workers), rounds)

    monkeypatch.setattr(window, "_sample_case", same_order)
    drifting = scripted_window([HARD] * 4, HARD, pairs=20, seconds=0.1, clock=Sawtooth)
    assert any(case.verdict != "same" for i in range(3) for case in judged(drifting, i).values())


def test_the_window_and_a_paired_step_agree_on_the_same_pair_within_their_intervals():
    """The same two builds, with a 3% slowdown of one call and its neighbours unchanged, through a window of five
    and through the paired engine: each ratio lies in the other's interval, and their widths are alike."""
    slow = slowed(HARD, HARD_INJECTED, 1.03)
    found = scripted_window([HARD, HARD, slow, slow, slow], HARD, pairs=20, seconds=0.1, clock=Sawtooth)
    in_window = judged(found, 1)
    rng = random.Random(7)
    per_pair = {name: [] for name in HARD}
    for pair in range(20):
        core = Sawtooth(7000 + pair)
        a = ScriptedWorker("base", core, HARD, rng.gauss(1, 0.002))
        b = ScriptedWorker("head", core, slow, rng.gauss(1, 0.002))
        for name in HARD:
            per_pair[name].append(paired.measure_case(a, b, name, paired.Settings(seconds=0.1), now=core.seconds)[1:])
    stepped = {name: stats.analyse(name, found_, 0.01) for name, found_ in per_pair.items()}
    for name in HARD:
        w, s = in_window[name], stepped[name]
        assert s.low <= w.ratio <= s.high or w.low <= s.ratio <= w.high, (name, w, s)
        assert (w.high - w.low) < 3 * (s.high - s.low) + 0.002, (name, w, s)
    assert in_window[HARD_INJECTED].verdict == stepped[HARD_INJECTED].verdict == "regression"


def test_a_window_of_two_times_in_another_order_than_the_paired_engine_and_reaches_the_same_verdicts(tmp_path):
    """Would ``compare`` and the history's steps measure the same as a window of two builds? The same two builds
    (one call 3% slower), the same process pairs, seeds and cores, through ``paired.run`` and ``window.run`` on the
    scripted machine: both size the sample on the base, warm each build once and judge a step alike
    (``paired.judge``), and they reach the same verdicts. But the paired engine times every group A B B A, and a
    window of two draws each round's order, A B B A or B A A B: the samples are taken in another order, so one
    engine for both is a change of method (docs/method.md), which a GPU run decides, not a refactor."""
    names = [INJECTED, "bench_sim.Op0.time_op0('core')", "bench_sim.Op9.time_op9('core')"]
    costs_of = {"base": CASES, "head": slowed(CASES, INJECTED, 1.03)}
    sides = [paired.Side(n, n, n[0] * 40, "python") for n in costs_of]
    settings = paired.Settings(pairs=8, seconds=0.05)

    def through(engine):
        log = {}

        def make(side, core, settings, path):
            group = int(Path(path).name[-len("00-base.log"):][:2])  # pairNN-side.log, groupNN-side.log
            shared = log.setdefault(group, {"core": Core(group)})  # the group's workers share its core
            worker = ScriptedWorker(side.name, shared["core"], costs_of[side.name], 1 + 0.001 * group)
            worker.side, worker.close = side, lambda: None
            worker.hello = {"versions": {"python": "3.12"}, "aslr_off": False}
            sample = worker.sample
            worker.sample = lambda calls: shared.setdefault(worker.case, []).append(side.name) or sample(calls)
            return worker

        report = engine.run(sides, names, settings, tmp_path / engine.__name__, {}, progress=lambda m: None,
                            cores=[0, 1], make_worker=make)
        step = report if engine is paired else report.steps[0]
        orders = set()
        for shared in log.values():
            for name in names:
                taken = shared[name]
                first = taken.index("head")  # the base alone sizes the sample, then each build's warm sample
                assert taken[first - 1:first + 1] == ["base", "head"]
                orders |= {tuple(taken[i:i + 4]) for i in range(first + 1, len(taken), 4)}
        return {c.name: c.verdict for c in step.cases}, orders

    by_pairs, paired_orders = through(paired)
    by_window, window_orders = through(window)
    assert by_pairs == by_window == {name: "regression" if name == INJECTED else "same" for name in names}
    assert paired_orders == {("base", "head", "head", "base")}
    assert window_orders == {("base", "head", "head", "base"), ("head", "base", "base", "head")}


def test_a_case_one_build_lacks_is_listed_at_its_steps_and_measured_at_the_others():
    """Commit 2 adds a call the two before it lack (their setup skips it): the steps 0 -> 1 say both skip it, 1 -> 2
    that only the head has it, 2 -> 3 measures it; each commit's own numbers say the same."""
    new = INJECTED

    def outcome_of(group):
        workers = [ScriptedWorker(f"commit{k}", Core(group), CASES, 1.0) for k in range(4)]
        for worker in workers[:2]:
            worker.setup = lambda name: {"skip": "this build has no such call"}
        return window.measure_case(workers, new, paired.Settings(seconds=0.01), random.Random(group),
                                   now=workers[0].core.seconds)

    outcomes = [outcome_of(g) for g in range(8)]
    assert {window.pair_outcome(o, 0, 1) for o in outcomes} == {("skip", "this build has no such call")}
    assert {window.pair_outcome(o, 1, 2) for o in outcomes} == {("only", "head", "this build has no such call")}
    assert {window.pair_outcome(o, 2, 3)[0] for o in outcomes} == {"ok"}
    sides = [window.side_result([{new: o} for o in outcomes], [new], k) for k in range(4)]
    assert [bool(s.samples) for s in sides] == [False, False, True, True]
    assert sides[0].skipped == {new: "this build has no such call"} and sides[2].calls[new] >= 1


def test_a_worker_that_reports_an_error_fails_its_sides_steps_and_no_other():
    outcome = ("ok", 10, [("ok",), ("error", "commit1: setup is broken"), ("ok",)], [[(1, 1), None, (1, 1)]])
    assert window.pair_outcome(outcome, 0, 1) == ("error", "commit1: setup is broken")
    assert window.pair_outcome(outcome, 1, 2) == ("error", "commit1: setup is broken")
    assert window.pair_outcome(("error", "died"), 0, 1) == ("error", "died")


def dying_on(make, bad_side, case, at_start=False):
    """``make`` with the worker of ``bad_side`` dying (a WorkerError, as a crashed process gives) on its first
    sample of ``case``; with ``at_start``, never starting."""
    def maker(side, core, settings, log):
        if side.name == bad_side and at_start:
            raise paired.WorkerError(f"the {side.name} worker could not start: exit 1")
        worker = make(side, core, settings, log)
        if side.name == bad_side:
            sample = worker.sample

            def dies(calls):
                if worker.case == case:
                    raise paired.WorkerError(f"the {side.name} worker died (exit -11) during sample")
                return sample(calls)
            worker.sample = dies
        return worker
    return maker


@pytest.mark.parametrize("at_start", [False, True])
def test_a_build_whose_worker_dies_loses_the_case_at_its_own_steps_alone(tmp_path, at_start):
    """Four builds, the newest one's worker dying on one case (or never starting): the two steps of the healthy
    builds measure that case, each healthy build keeps its samples, and only the step to the newest build names
    the case not measured, with the build that lost it; a worker that died is started again for the next case."""
    other = "bench_sim.Op0.time_op0('core')"
    costs_of = {f"commit{k}": CASES for k in range(4)}
    sides = [paired.Side(n, n, n[-1] * 40, "python") for n in costs_of]
    report = window.run(sides, [INJECTED, other], paired.Settings(pairs=6, seconds=0.02), tmp_path, {},
                        progress=lambda m: None, cores=[0, 1],
                        make_worker=dying_on(scripted_maker(costs_of, {}), "commit3", INJECTED, at_start))
    assert [sorted(c.name for c in step.cases) for step in report.steps[:2]] == [sorted([INJECTED, other])] * 2
    assert set(report.steps[2].errors) == ({INJECTED, other} if at_start else {INJECTED})
    assert "commit3" in report.steps[2].errors[INJECTED]
    assert [sorted(side.samples) for side in report.per_side[:3]] == [sorted([INJECTED, other])] * 3
    assert INJECTED in report.per_side[3].errors
    if not at_start:
        assert other in report.per_side[3].samples  # started again after it died


def test_a_build_whose_worker_fails_to_start_in_one_group_says_its_versions_from_another(tmp_path):
    """commit1's worker cannot start in process group 0 alone: the steps still carry commit1's versions (what
    the pages read its cuda-bindings from), said by the worker that started in another group."""
    costs_of = {f"commit{k}": CASES for k in range(3)}
    sides = [paired.Side(n, n, n[-1] * 40, "python") for n in costs_of]
    make = scripted_maker(costs_of, {})

    def maker(side, core, settings, log):
        if side.name == "commit1" and Path(log).name.startswith("group00"):
            raise paired.WorkerError("the commit1 worker could not start: exit 1")
        return make(side, core, settings, log)

    report = window.run(sides, [INJECTED], paired.Settings(pairs=4, seconds=0.02), tmp_path, {},
                        progress=lambda m: None, cores=[0], make_worker=maker)
    assert report.workers["commit1"] == {"versions": {"python": "3.12"}, "aslr_off": False}
    assert [step.workers for step in report.steps] == [
        {"base": report.workers["commit0"], "head": report.workers["commit1"]},
        {"base": report.workers["commit1"], "head": report.workers["commit2"]}]


@pytest.mark.parametrize("count, size, expected", [
    (1, 6, [[0]]),
    (3, 6, [[0, 1, 2]]),
    (6, 6, [[0, 1, 2, 3, 4, 5]]),
    (7, 6, [[0, 1, 2, 3, 4, 5], [5, 6]]),
    (11, 6, [[0, 1, 2, 3, 4, 5], [5, 6, 7, 8, 9, 10]]),
    (12, 6, [[0, 1, 2, 3, 4, 5], [5, 6, 7, 8, 9, 10], [10, 11]]),
    (5, 2, [[0, 1], [1, 2], [2, 3], [3, 4]]),
])
def test_blocks_share_their_edge_so_that_every_adjacent_pair_is_in_exactly_one(count, size, expected):
    found = window.blocks(list(range(count)), size)
    assert found == expected
    pairs = [(b[i], b[i + 1]) for b in found for i in range(len(b) - 1)]
    assert pairs == [(i, i + 1) for i in range(count - 1)]
    assert window.blocks([], size) == []


def scripted_maker(costs_of, clocks):
    def make(side, core, settings, log):
        worker = ScriptedWorker(side.name, clocks.setdefault(core, Core(core)), costs_of[side.name], 1.0)
        worker.side, worker.close = side, lambda: None
        worker.hello = {"versions": {"python": "3.12"}, "aslr_off": False}
        return worker
    return make


def test_a_run_gives_each_adjacent_pair_a_step_record_of_the_steps_shape(tmp_path):
    """window.run on scripted workers (threads): one paired.Report per adjacent pair, its sides named base and
    head, from which summaries.summary makes a record that records.SHAPES takes as a step; each side's samples are
    its commit's per-call times."""
    names = [INJECTED, "bench_sim.Op0.time_op0('core')"]
    costs_of = {"commit0": CASES, "commit1": CASES, "commit2": slowed(CASES, INJECTED, 1.10)}
    sides = [paired.Side(n, n, n[-1] * 40, "python") for n in costs_of]
    report = window.run(sides, names, paired.Settings(pairs=8, seconds=0.02), tmp_path, {},
                        progress=lambda m: None, cores=[0, 1], make_worker=scripted_maker(costs_of, {}))
    assert len(report.steps) == 2
    for step, (base, head) in zip(report.steps, [("0", "1"), ("1", "2")]):
        assert [s.name for s in step.sides] == ["base", "head"]
        assert (step.sides[0].commit[0], step.sides[1].commit[0]) == (base, head)
        data = summaries.summary(step, "step") | {"bindings": "source", "release_tags": None}
        records.check(records.stamped(data, "step"), "step")
    verdicts = [{c.name: c.verdict for c in step.cases} for step in report.steps]
    assert verdicts == [{n: "same" for n in names}, {INJECTED: "regression", names[1]: "same"}]
    per_call = [statistics.median(side.samples[INJECTED]) for side in report.per_side]
    assert per_call[2] / per_call[0] == pytest.approx(1.10, rel=0.01)
    assert per_call[0] == pytest.approx(CASES[INJECTED], rel=0.01)


def test_a_window_of_one_build_gives_its_numbers_and_no_step(tmp_path):
    """A commit with no measured neighbour (a new machine's first) is still measured: its samples, no step."""
    one = paired.Side("commit0", "a", "a" * 40, "python")
    report = window.run([one], [INJECTED], paired.Settings(pairs=6, seconds=0.02), tmp_path, {},
                        progress=lambda m: None, cores=[0, 1], make_worker=scripted_maker({"commit0": CASES}, {}))
    assert report.steps == [] and statistics.median(report.per_side[0].samples[INJECTED]) == pytest.approx(
        CASES[INJECTED], rel=0.01)
    with pytest.raises(ValueError, match="name of its own"):
        window.run([one, one], [INJECTED], paired.Settings(), tmp_path)
    with pytest.raises(ValueError, match="a build"):
        window.run([], [INJECTED], paired.Settings(), tmp_path)


# --- real workers, real cuda-core releases, a real git repository, real asv --------------------------------------
#: cases that run without a GPU in both releases' environments, and one (NVRTC's) that only the newer one has
CPU_CASES = ["bench_harness.Floor.time_noop('noop')",
             "bench_launch.LaunchConfigCreate.time_launch_config_create('core')",
             "bench_enum.ResultFromValue.time_result_from_value('bindings')",
             "bench_program.Compile.time_compile('bindings', 'ptx')"]


@pytest.mark.slow
def test_a_window_over_real_releases_records_steps_the_history_reads_and_asv_results_asv_publishes(tmp_path, git_repo):
    """Three commits of a real repository, "built" as cuda-core 1.0.1 (no NVRTC), 1.2.2 and 1.2.2 again, timed in
    one pass by real workers: two step records of the paired step's shape (the first says only its head has the
    NVRTC case), which the read layer takes as steps with no gap between them; each commit's asv results file, with
    asv's version of each benchmark, which asv publish draws; builds.jsonl and commits.json as a run writes them."""
    import json
    import os
    import subprocess

    from conftest import NEWEST_WITH_NVRTC, RELEASES, RUNNER, asv_conf, git, make_env

    from cuda_bench.foundations import machine
    from cuda_bench.publish import dashboard, read

    older, newer = make_env(RELEASES["1.0.1"] + RUNNER), make_env(NEWEST_WITH_NVRTC + RUNNER)
    commits = []
    for i in range(3):
        (git_repo / "n").write_text(str(i))
        git(git_repo, "add", "n")
        when = f"2026-07-0{i + 1}T12:00:00Z"  # a day apart: the history orders commits by date
        subprocess.run(["git", "commit", "-qm", f"commit {i}"], cwd=git_repo, check=True,
                       env={**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})
        commits.append(git(git_repo, "rev-parse", "HEAD"))
    envs = {c: {"python": str(p), "commit": c, "installed": {"cuda-core": v},
                "build": {"commit": c, "bindings": "wheel", "ok": True, "packages": {}, "seconds": 0.0}}
            for c, p, v in zip(commits, (older, newer, newer), ("1.0.1", "1.2.2", "1.2.2"))}
    settings = paired.Settings(pairs=6, seconds=0.02, jobs=2)
    measured = onepass.measure_built(git_repo, commits, envs, bindings="wheel", settings=settings, names=CPU_CASES,
                                    thresholds={}, log_dir=tmp_path / "logs", progress=lambda m: None, block=6,
                                    cores=[0, 1], build_seconds=0.0)
    assert [(link.base, link.head) for link in measured.links] == list(zip(commits, commits[1:]))
    first, second = (link.report for link in measured.links)
    assert first.only == {CPU_CASES[3]: ("head", first.only[CPU_CASES[3]][1])}
    assert {c.name for c in second.cases} == set(CPU_CASES)
    assert not measured.per_commit[0].samples.get(CPU_CASES[3]) and CPU_CASES[3] in measured.per_commit[0].skipped

    # the environment as the project's derived configuration names it (asv builds none of it here)
    config = asv_conf(tmp_path, git_repo, newer, environment_type="virtualenv", pythons=["3.12"],
                      matrix={"env": {"CUDA_BENCH_BINDINGS": ["wheel"]}})
    name, info = machine.record("window-test")
    results_dir = tmp_path / "results"
    found = onepass.step_records(measured, git_repo, bindings="wheel", settings=settings, command="cuda-bench window",
                                info=info)
    assert keep.record(measured, found, git_repo, conf_path=config, machine_name=name, results_dir=results_dir,
                         out=tmp_path / "out")
    history = read.load(results_dir)
    steps = history.machines[name].steps
    assert [(s["base"], s["head"]) for s in steps] == list(zip(commits, commits[1:]))
    assert all(s["window"]["commits"] == commits and s["seconds"] > 0 for s in steps)
    assert history.machines[name].gaps == []  # every measured commit is paired with the one before it
    files = sorted((results_dir / name).glob("*-*.json"),
                   key=lambda p: commits.index(json.loads(p.read_text())["commit_hash"]))
    assert len(files) == 3
    suite = json.loads((results_dir / "benchmarks.json").read_text())
    for path, found in zip(files, measured.per_commit):
        data = json.loads(path.read_text())
        row = dict(zip(data["result_columns"], data["results"]["bench_harness.Floor.time_noop"]))
        assert row["version"] == suite["bench_harness.Floor.time_noop"]["version"]
        assert row["result"][0] == pytest.approx(statistics.median(found.samples[CPU_CASES[0]]) * 1e-9, rel=0.05)
    builds = [json.loads(line) for line in (results_dir / name / "builds.jsonl").read_text().splitlines()]
    assert [b["commit"] for b in builds] == commits
    assert set(json.loads((results_dir / "commits.json").read_text())) == set(commits)
    dashboard.publish(config)
    (graph,) = [p for p in (tmp_path / "html" / "graphs").rglob("bench_harness.Floor.time_noop.json")
                if f"machine-{name}" in p.parts]
    drawn = json.loads(graph.read_text())  # asv's graph: [revision, [value per parameter]] per commit
    assert [value for _, (value,) in drawn] == pytest.approx(
        [statistics.median(found.samples[CPU_CASES[0]]) * 1e-9 for found in measured.per_commit], rel=0.05)


def test_a_window_of_new_commits_takes_the_measured_commits_of_main_around_it():
    line = list("abcdefgh")
    assert onepass.with_edges(list("de"), line, {"c", "f"}) == list("cdef")  # the measured neighbour on each side
    assert onepass.with_edges(list("de"), line, {"b", "g"}) == list("de")  # never past a commit not measured
    assert onepass.with_edges(list("de"), line, {"d", "f"}) == list("def")  # one already in the window
    assert onepass.with_edges(list("de"), line, set()) == list("de")
    assert onepass.with_edges(["x", "e"], line, {"b"}) == ["x", "e"]  # off main: nothing added


def test_the_window_command_keeps_an_aa_out_of_the_history(tmp_path, git_repo, capsys, monkeypatch):
    from conftest import with_a_gpu

    from cuda_bench import cli

    monkeypatch.setenv("HOME", str(tmp_path))
    with_a_gpu(monkeypatch)
    status = cli.main(["window", "--repo", str(git_repo), "--results-dir", str(tmp_path), "HEAD", "HEAD"])
    assert status == 3
    assert "a commit listed twice is an A/A, which the history does not keep: --out DIR keeps it" in \
        capsys.readouterr().err


@pytest.mark.parametrize("identical_after, block, expected", [
    ((), 6, [[0, 1, 2, 3]]),
    ((), 2, [[0, 1], [1, 2], [2, 3]]),
    ((), 3, [[0, 1, 2], [2, 3]]),
    ((1,), 2, [[0, 1, 2], [2, 3]]),  # commits 1 and 2 build the same wheels: one build, never measured apart
    ((0, 2), 2, [[0, 1, 2, 3]]),
])
def test_a_windows_blocks_share_one_commit_and_hold_every_adjacent_pair_once(identical_after, block, expected,
                                                                             monkeypatch):
    """``onepass.parts_of``: the commits each block measures, consecutive blocks sharing the last commit of the
    build they share, so that each adjacent pair of commits (a step, or identical builds) is kept by one block."""
    commits = list("abcd")
    monkeypatch.setattr(summaries, "built_from", lambda repo, a, b, bindings: (a, b))
    monkeypatch.setattr(summaries, "identical", lambda pair: commits.index(pair[0]) in identical_after)
    parts = onepass.parts_of(None, commits, "wheel", block)
    assert parts == expected
    pairs = [(p[k], p[k + 1]) for p in parts for k in range(len(p) - 1)]
    assert sorted(pairs) == [(k, k + 1) for k in range(len(commits) - 1)]


CUT_WINDOW = """
import json, sys
from pathlib import Path
from cuda_bench.compare import gate, keep, paired
from cuda_bench.foundations import process
args = json.loads(sys.argv[1])
process.stop_on_sigterm()  # as the command line does: SIGTERM stops as Ctrl-C does
gate.environments = lambda repo, revs, *a, **k: {rev: args["envs"][rev] for rev in revs}
try:
    conf = {"matrix": {"env": {"CUDA_BENCH_BINDINGS": ["wheel"]}}}
    settings = paired.Settings(pairs=args.get("pairs", 4), seconds=0.05, jobs=1)
    kept = keep.into_folder(conf, args["repo"], args["commits"], args["out"], calibrated=args["out"],
                            settings=settings, bench=args["bench"], block=2, command="test", info={},
                            progress=lambda m: print(m, file=sys.stderr, flush=True))
except KeyboardInterrupt:
    sys.exit(130)
print(json.dumps({"blocks": kept.blocks, "reused": kept.reused, "steps": len(kept.found)}))
"""


@pytest.mark.slow
def test_a_window_cut_between_blocks_keeps_the_finished_block_and_measures_only_the_rest_when_run_again(
        tmp_path, git_repo):
    """Three commits, two a block: SIGTERM (as a machine's time limit sends it) once the first block is written
    stops the window with exit 130, and that block stays whole in its folder; the same window run again measures
    only the second block, says so, and keeps the whole window from both."""
    import json
    import re
    import signal
    import subprocess
    import sys
    import time

    from conftest import NEWEST_WITH_NVRTC, ROOT, RUNNER, git, make_env

    python = str(make_env(NEWEST_WITH_NVRTC + RUNNER))
    commits = []
    for i in range(3):
        (git_repo / "n").write_text(str(i))
        git(git_repo, "add", "n")
        git(git_repo, "commit", "-qm", f"commit {i}")
        commits.append(git(git_repo, "rev-parse", "HEAD"))
    out = tmp_path / "out"
    envs = {c: {"python": python, "commit": c, "installed": {}, "build": {"commit": c, "ok": True, "packages": {}}}
            for c in commits}
    args = json.dumps({"repo": str(git_repo), "commits": commits, "out": str(out), "envs": envs,
                       "bench": [re.escape(CPU_CASES[0]), re.escape(CPU_CASES[1])]})
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    first = out / "blocks" / f"01-{commits[0][:9]}-{commits[1][:9]}" / "window.json"
    proc = subprocess.Popen([sys.executable, "-c", CUT_WINDOW, args], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not first.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-3000:]
    kept = json.loads(first.read_text())
    assert kept["commits"] == commits[:2] and len(kept["steps"]) == 1 and not (out / "window.json").exists()
    written = first.stat().st_mtime_ns

    again = subprocess.run([sys.executable, "-c", CUT_WINDOW, args], env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "window: 1 of 2 blocks already measured; measuring the other 1" in again.stderr
    assert f"window: block 2 of 2: {commits[1][:9]} {commits[2][:9]}" in again.stderr  # its place in the window
    assert json.loads(again.stdout) == {"blocks": 2, "reused": 1, "steps": 2}
    assert first.stat().st_mtime_ns == written  # the kept block is read, not measured again
    whole = json.loads((out / "window.json").read_text())
    assert [(s["base"], s["head"]) for s in whole["steps"]] == list(zip(commits, commits[1:]))
    assert [e["commit"] for e in whole["per_commit"]] == commits
    # asked with other settings, the same window measures both blocks again: what was kept answers another question
    other = json.dumps(json.loads(args) | {"pairs": 3})
    third = subprocess.run([sys.executable, "-c", CUT_WINDOW, other], env=env, capture_output=True, text=True)
    assert third.returncode == 0 and json.loads(third.stdout)["reused"] == 0, third.stderr[-3000:]
    assert first.stat().st_mtime_ns != written


@pytest.mark.slow
def test_a_window_writes_nothing_of_an_edge_commit_but_the_cases_its_asv_file_lacks(tmp_path, git_repo):
    """A window over b, c after one over a, b that lost a case at b: b is an edge the history holds. Its asv
    numbers stay as measured first, its builds.jsonl row is not written again, and only the case its asv file
    lacks takes the new window's samples, so that a lost case is measurable again; a tree it compiled again is
    a compile record of its own."""
    import sys
    from types import SimpleNamespace

    from conftest import asv_conf, asv_results, git

    from cuda_bench.foundations import machine

    commits = []
    for i in range(3):
        (git_repo / "n").write_text(str(i))
        git(git_repo, "add", "n")
        git(git_repo, "commit", "-qm", f"commit {i}")
        commits.append(git(git_repo, "rev-parse", "HEAD"))
    a, b, c = commits
    floor, config_case = CPU_CASES[0], CPU_CASES[1]
    conf = asv_conf(tmp_path, git_repo, sys.executable, environment_type="virtualenv", pythons=["3.12"],
                    matrix={"env": {"CUDA_BENCH_BINDINGS": ["wheel"]}})
    name, _ = machine.record("window-edge-test")
    results_dir = tmp_path / "results"

    def window_of(commits_, samples_per_commit):
        per_commit = [window.SideResult(samples=s, calls={n: 100 for n in s}) for s in samples_per_commit]
        envs = {x: {"python": sys.executable, "installed": {"cuda-core": "1.2.2"},
                    "build": {"commit": x, "bindings": "wheel", "ok": True, "packages": {}, "seconds": 1.0,
                              "first": x in (a, b)}}
                for x in commits_}
        return SimpleNamespace(commits=commits_, per_commit=per_commit, envs=envs)

    set_current = "bench_device.SetCurrent.time_set_current"
    core, bindings = f"{set_current}('core')", f"{set_current}('bindings')"
    first = window_of([a, b], [{floor: [10.0] * 5, config_case: [500.0] * 5},
                               {floor: [11.0] * 5, core: [300.0] * 5}])
    assert keep.record(first, [], git_repo, conf_path=conf, machine_name=name, results_dir=results_dir,
                       out=tmp_path / "w1")
    (b_file,) = [p for p in (results_dir / name).glob(f"{b[:8]}-*.json")]
    kept, raw = asv_results(b_file), json.loads(b_file.read_text())
    floor_key, config_key = ("bench_harness.Floor.time_noop", ("noop",)), (
        "bench_launch.LaunchConfigCreate.time_launch_config_create", ("core",))
    assert kept[floor_key] == pytest.approx(11e-9) and kept.get(config_key) is None

    second = window_of([b, c], [{floor: [99.0] * 5, config_case: [520.0] * 5, core: [999.0] * 5,
                                 bindings: [250.0] * 5}, {floor: [12.0] * 5}])
    for env in second.envs.values():
        env["build"]["first"] = False
    compiled = {"built": "2026-12-06T00:00:00Z", "wall_seconds": 60.0, "cpu_seconds": 100.0, "jobs": 2,
                "ccache": False, "versions": {"python": "3.12.3", "cython": "3.2.1"}}
    second.envs[b]["build"]["packages"] = {"cuda_core": {"action": "built", "seconds": 60.0, "key": "k",
                                                         "wheels": [], "compile": compiled}}
    assert keep.record(second, [], git_repo, conf_path=conf, machine_name=name, results_dir=results_dir,
                       out=tmp_path / "w2", before={a, b})
    now = asv_results(b_file)
    assert now[floor_key] == pytest.approx(11e-9)  # measured first, kept
    assert now[config_key] == pytest.approx(520e-9)  # lost first, filled by the window that measured it
    assert (now[(set_current, ("core",))], now[(set_current, ("bindings",))]) == pytest.approx((300e-9, 250e-9))
    # and every statistic of what it held stays: asv's interval, quartiles, repeats, start and duration
    columns, rows = raw["result_columns"], json.loads(b_file.read_text())["results"]
    before = dict(zip(columns, raw["results"][set_current]))
    after = dict(zip(columns, rows[set_current]))
    for column in columns:
        if column.startswith("stats_") or column in ("started_at", "duration"):
            assert (after[column] or [None])[0] == (before[column] or [None])[0] if isinstance(
                before[column], list) else after[column] == before[column], column
    assert rows["bench_harness.Floor.time_noop"] == raw["results"]["bench_harness.Floor.time_noop"]
    builds = [json.loads(line) for line in (results_dir / name / "builds.jsonl").read_text().splitlines()]
    assert [(r["commit"], r["first"]) for r in builds] == [(a, True), (b, True), (c, False)]
    compiles = [json.loads(line) for line in (results_dir / name / "compiles.jsonl").read_text().splitlines()]
    assert [(r["commit"], r["cpu_seconds"]) for r in compiles] == [(b, 100.0)]  # the edge built its tree again
    assert set(json.loads((results_dir / "commits.json").read_text())) == {a, b, c}


def test_a_windows_exit_status_says_a_step_that_lost_process_pairs_or_a_case():
    """A window whose steps all read same exits 0; one whose step lost process pairs of a case, or could not
    measure one, exits 2 (something could not be measured); a flag outranks both."""
    from conftest import step_case, step_record

    from cuda_bench.foundations.status import INCOMPLETE, OK, REGRESSION

    same = step_record(cases=[step_case("bench_x.A.time_a('core')")])
    assert keep.status_of([same, same]) == OK
    assert keep.status_of([same, same | {"lost": {"bench_x.A.time_a('core')": 3}}]) == INCOMPLETE
    assert keep.status_of([same | {"errors": {"bench_x.B.time_b('core')": "the commit1 worker died"}}]) == INCOMPLETE
    flagged = step_record(cases=[step_case("bench_x.A.time_a('core')", 1.2, "regression")])
    assert keep.status_of([flagged, same | {"lost": {"bench_x.A.time_a('core')": 3}}]) == REGRESSION


def test_a_windows_steps_are_judged_by_the_window_a_a_runs_thresholds_where_the_machine_has_them(tmp_path):
    """A window A/A (`cuda-bench aa --window`) records per case the farthest any of its steps reached, as the
    window engine's; a window's steps take the highest of those and the two-build A/A runs', a paired step the
    two-build ones alone."""
    from conftest import step_case, step_record

    name = "bench_x.A.time_a('core')"
    steps = [step_record(cases=[step_case(name, 1.002) | {"low": 0.996, "high": 1.012}]),
             step_record(cases=[step_case(name, 0.998) | {"low": 0.981, "high": 1.004}])]
    record = gate.window_calibration_record(steps, 3)
    assert record["engine"] == "window" and record["builds"] == 3
    assert record["thresholds"][name] == pytest.approx(stats.calibrate(steps[1]["cases"])[name])
    records.append(tmp_path, "calibration", {"base": "a" * 40, "head": "a" * 40, "date": "2026-12-06T00:00:00Z",
                                              "settings": steps[0]["settings"], "thresholds": {name: 0.011}})
    records.append(tmp_path, "calibration", record)
    assert records.calibration(tmp_path) == {name: 0.011}
    assert records.calibration(tmp_path, "window") == {name: record["thresholds"][name]} and \
        record["thresholds"][name] > 0.011


@pytest.mark.slow
def test_a_window_judges_its_steps_by_the_window_engines_thresholds(tmp_path, git_repo, monkeypatch):
    """Two commits measured by the one pass with real workers: each case's threshold in the step is the machine's
    window A/A threshold (5%), not its two-build one (1%)."""
    import re

    from conftest import NEWEST_WITH_NVRTC, RUNNER, git, make_env

    python = str(make_env(NEWEST_WITH_NVRTC + RUNNER))
    commits = []
    for i in range(3):
        (git_repo / "n").write_text(str(i))
        git(git_repo, "add", "n")
        git(git_repo, "commit", "-qm", f"commit {i}")
        commits.append(git(git_repo, "rev-parse", "HEAD"))
    case = CPU_CASES[0]
    settings = {"layouts": "random", "confidence": 0.95, "cores": [0]}
    for engine, threshold in (("paired", 0.01), ("window", 0.05)):
        records.append(tmp_path, "calibration", {"base": commits[0], "head": commits[0], "date": "2026-12-06T00:00:00Z",
                                                  "settings": settings, "thresholds": {case: threshold},
                                                  "engine": engine})
    envs = {c: {"python": python, "commit": c, "installed": {}, "build": {"commit": c, "ok": True, "packages": {}}}
            for c in commits}
    monkeypatch.setattr(gate, "environments", lambda repo, revs, *a, **k: {rev: envs[rev] for rev in revs})
    found, said = [], []
    onepass.measure_parts({"matrix": {"env": {"CUDA_BENCH_BINDINGS": ["wheel"]}}}, git_repo, commits,
                          [[0, 1], [1, 2]], calibrated=tmp_path,
                          settings=paired.Settings(pairs=3, seconds=0.02, jobs=1),
                          bench=[re.escape(case)], log_dir=tmp_path / "logs", progress=said.append, block=2,
                          kept=lambda k, measured: found.append(measured))
    (link,) = found[0].links
    assert [c.threshold for c in link.report.cases] == [0.05]
    # each part's progress line numbers its block in the whole window
    assert [m.split(":")[1].strip() for m in said if m.startswith("window: block")] == ["block 1 of 2", "block 2 of 2"]


def test_a_block_counts_as_kept_in_the_history_only_where_its_steps_measured_every_case(tmp_path):
    """``keep.stepped``: a step of every case the window asks for, or of identical builds, is kept; one of a few
    cases (a ``-b`` step) or one that could not measure a case is measured again."""
    from conftest import step_case, step_record

    names = ["bench_x.A.time_a('core')", "bench_x.B.time_b('core')"]
    full = [step_case(n) for n in names]
    kinds = {"ab": step_record(base="a" * 40, head="b" * 40, cases=full),
             "bc": step_record(base="b" * 40, head="c" * 40, cases=full[:1]),
             "cd": step_record(base="c" * 40, head="d" * 40, cases=full[:1], errors={names[1]: "died"}),
             "de": step_record(base="d" * 40, head="e" * 40, identical=True),
             "ef": step_record(base="e" * 40, head="f" * 40, cases=full[:1], skipped={names[1]: "no GPU"})}
    for record in kinds.values():
        records.append(tmp_path / "m", "step", record)
    assert keep.stepped(tmp_path, "m", "13.3.1", names) == {("a" * 40, "b" * 40), ("d" * 40, "e" * 40),
                                                             ("e" * 40, "f" * 40)}
