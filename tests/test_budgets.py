"""Budgets (budgets.json5, cuda_bench.results.budgets): the file read or refused with its line, verdicts only on whole
intervals, the gate's exit status 1 on a call over its budget, and the front page's table."""

from __future__ import annotations

import html
import json
import re

import pytest
from conftest import ROOT, over_cpp_case, over_cpp_record, with_a_gpu, write_records
from test_plan import MACHINE, monorepo  # noqa: F401  (a fixture)

from cuda_bench import cli
from cuda_bench.compare import comment, gate
from cuda_bench.foundations.status import INCOMPLETE, OK, REGRESSION
from cuda_bench.publish import read
from cuda_bench.publish.pages import landing
from cuda_bench.results import asv_files, budgets, overcpp_read

LAUNCH = "bench_launch.Launch.time_launch"
LAUNCH_16 = f"{LAUNCH}('core', '16 ptr')"
SET_CORE = "bench_device.SetCurrent.time_set_current('core')"


def test_the_committed_file_reads_and_sets_cuda_pythons_target_for_every_twin():
    found = budgets.read(ROOT / "budgets.json5")
    assert found.error is None and found.default_ns == 1000
    assert found.budget(budgets.PYTHON_OVER_CPP, SET_CORE) == (1000, "default")
    # CuPy's forms are not cuda-python's: no budget; cuda.core over cuda.bindings: none unless set
    assert found.budget(budgets.PYTHON_OVER_CPP, SET_CORE.replace("core", "cupy")) == (None, None)
    assert found.budget(budgets.CORE_OVER_BINDINGS, SET_CORE) == (None, None)


def test_the_more_particular_key_wins_and_each_kind_holds_its_forms():
    found = budgets.parse("""// comments are allowed
    {
      python_over_cpp: {default_ns: 800, operations: {"bench_launch.Launch.time_launch": 3000,
                                                      "bench_launch.Launch.time_launch('16 ptr')": 5000}},
      core_over_bindings: {operations: {"bench_device.SetCurrent.time_set_current": 1.5}},
    }""")
    assert found.budget(budgets.PYTHON_OVER_CPP, LAUNCH_16) == (5000, f"{LAUNCH}('16 ptr')")
    assert found.budget(budgets.PYTHON_OVER_CPP, f"{LAUNCH}('bindings', 'none')") == (3000, LAUNCH)
    assert found.budget(budgets.PYTHON_OVER_CPP, SET_CORE) == (800, "default")
    assert found.budget(budgets.CORE_OVER_BINDINGS, SET_CORE) == (1.5, "bench_device.SetCurrent.time_set_current")
    assert found.budget(budgets.CORE_OVER_BINDINGS, SET_CORE.replace("core", "bindings")) == (None, None)


@pytest.mark.parametrize("text, line, said", [
    ("{\n  python_over_cpp: {\n    default_ns: 1000\n    operations: {}}}", 4, "does not parse as JSON5"),
    ("{\n  python_over_cpp: {\n    default_ns: -5,\n  }\n}", 3, "'default_ns' is not a positive number of ns"),
    ("{\n  python_over_cpp: {operations: {\n    \"bench_launch.Launch.time_launch\": \"1 us\",\n  }}\n}", 3,
     "'bench_launch.Launch.time_launch' is not a number"),
    ("{\n  core_over_bindings: {operations: {\n    \"bench_launch.Launch.time_launch('core')\": 1.1}}}", 3,
     "names a library ('core')"),
    ("{\n  core_over_bindings: {operations: {\n    \"launch\": 1.1}}}", 3, "'launch' names no operation"),
    ("{\n  python_over_cpp: {},\n  core_over_cpp: {},\n}", 3, "unknown key 'core_over_cpp'"),
    ("{\n  core_over_bindings: {\n    default: 1.1}}", 3, "core_over_bindings: unknown key 'default'"),
    ("{\n  python_over_cpp: {default_ns: true}}", 2, "'default_ns' is not a number"),
    ("{\n  python_over_cpp: {default_ns: Infinity}}", 2, "'default_ns' is not a number"),
    ("{\n  python_over_cpp: {default_ns: 0}}", 2, "'default_ns' is not a positive number of ns"),  # never within
    ("{\n  core_over_bindings: {operations: {\n    \"bench_launch.Launch.time_launch\": 0}}}", 3,
     "'bench_launch.Launch.time_launch' is not a positive ratio"),
])
def test_a_bad_file_is_one_line_naming_the_file_its_line_and_why_and_the_command_exits_2(
        tmp_path, capsys, text, line, said):
    path = tmp_path / "budgets.json5"
    path.write_text(text)
    asv_files.forget()
    found = budgets.read(path)
    err = capsys.readouterr().err.strip()
    assert found.error is not None and found.over_cpp == {} and said in found.error
    assert err.count("\n") == 0 and err.startswith(f"budgets: {path}:{line}: ") and said in err, err
    assert found.budget(budgets.PYTHON_OVER_CPP, SET_CORE) == (None, None)  # nothing judged against it
    assert [(p, n) for p, n, _ in asv_files.noted()] == [(path.resolve(), line)]  # cuda_bench.cli: exit 2
    assert cli.with_unreadable(OK) == INCOMPLETE and cli.with_unreadable(REGRESSION) == REGRESSION
    asv_files.forget()


def test_no_file_is_cuda_pythons_target_alone(tmp_path):
    found = budgets.read(tmp_path / "absent.json5")
    assert found.error is None and found.budget(budgets.PYTHON_OVER_CPP, SET_CORE) == (1000, "default")


@pytest.mark.parametrize("low, high, coverage, expected, covers", [
    (1001, 1200, 0.95, "over", "95%"),             # the whole interval above
    (1000, 1200, 0.9643, "undecided", "95%"),      # its low end on the budget
    (800, 999, 0.95, "within", "95%"),             # the whole interval below
    (800, 1000, 0.95, "undecided", "95%"),         # its high end on the budget
    (900, 1100, 0.95, "undecided", "95%"),         # across it
    (1100, 1200, 0.875, "over", "87.5%"),          # too few processes for 95 %: over at the coverage it has, said
    (800, 900, 0.75, "within", "75%"),
])
def test_a_verdict_needs_the_whole_interval_on_one_side_of_the_budget_at_the_coverage_it_says(
        low, high, coverage, expected, covers):
    """Over or within only where the whole interval lies on one side of the budget; an interval of fewer processes
    than a 95 % one needs is judged at its own coverage, which the line says (never "undecided" for an interval
    wholly beyond the budget: issue 57)."""
    assert budgets.verdict(low, high, 1000, coverage) == expected
    case = over_cpp_case(SET_CORE, over_ns=(low + high) / 2, over_low=low, over_high=high, coverage=coverage)
    (judged,) = budgets.judge({SET_CORE: case}, {}, budgets.parse("{}"))
    assert judged["verdict"] == expected and judged["budget"] == 1000 and judged["key"] == "default"
    assert f"({covers} over one run's processes)" in budgets.line(judged)


def test_a_measurement_that_does_not_say_its_coverage_is_undecided():
    """An interval whose coverage is not recorded states no claim, whichever side of the budget it lies on."""
    case = over_cpp_case(SET_CORE, over_ns=1500, over_low=1400, over_high=1600)
    del case["coverage"]
    (judged,) = budgets.judge({SET_CORE: case}, {}, budgets.parse("{}"))
    assert judged["verdict"] == "undecided" and judged["status"] is None
    assert "(coverage not recorded)" in budgets.line(judged)


def test_cuda_core_over_cuda_bindings_is_judged_only_where_a_budget_is_set():
    forms = {SET_CORE: {"ratio": 1.6, "low": 1.55, "high": 1.7, "coverage": 0.96, "cpp_ns": 22.0}}
    assert budgets.judge({}, forms, budgets.parse("{}")) == []
    set_one = budgets.parse('{core_over_bindings: {operations: {"bench_device.SetCurrent.time_set_current": 1.5}}}')
    (judged,) = budgets.judge({}, forms, set_one)
    assert judged["verdict"] == "over" and budgets.budget_text(judged) == "×1.500"
    assert "cuda.core over cuda.bindings ×1.600 [1.550, 1.700]" in budgets.line(judged)


def over_record(commit, launch=(1200.0, 1100.0, 1300.0)):
    """An over-C++ record of ``commit``: Launch('core', '16 ptr') ``launch`` (1.2 µs [1.1, 1.3]) over its twin,
    SetCurrent('core') 300 ns [250, 350]."""
    over_ns, over_low, over_high = launch
    return over_cpp_record(commit=commit, cases=[
        over_cpp_case(LAUNCH_16, over_ns=over_ns, over_low=over_low, over_high=over_high, cpp_ns=4550.0),
        over_cpp_case(SET_CORE, over_ns=300.0, over_low=250.0, over_high=350.0, cpp_ns=22.0)])


WITHIN_AT_BASE = (900.0, 850.0, 950.0)


def test_the_gate_on_identical_builds_judges_the_heads_budgets_and_fails_on_none(monkeypatch, tmp_path,
                                                                                 monorepo):  # noqa: F811
    """Two commits that build the same wheels: nothing is timed, no case regressed. Without an over-C++ record the
    budgets are not judged, and the comment says so; with the head's record over the 1 µs budget and the base's
    within it, the comment names the call, its budget and its overhead with its interval, and the gate passes: the
    builds are identical, so the change took nothing over (a verdict that moved is the two runs' noise)."""
    repo, shas = monorepo
    monkeypatch.setattr(gate, "measure", lambda *a, **k: pytest.fail("identical builds were measured"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr("cuda_bench.commands.compare.RESULTS", tmp_path / "res")
    monkeypatch.setattr(budgets, "BUDGETS", tmp_path / "budgets.json5")  # absent: the default alone
    with_a_gpu(monkeypatch)  # over-C++ records, which the budgets are judged from, are a GPU machine's
    out, folder = tmp_path / "out", tmp_path / "res" / MACHINE

    def run_gate():
        return cli.main(["compare", shas[1], shas[2], "--repo", str(repo), "--machine", MACHINE, "--out", str(out)])

    assert run_gate() == OK  # no over-C++ record of the head: nothing judged, and the comment says so
    assert "Not judged: no over-C++ record of" in (out / "summary.md").read_text()
    write_records(folder, "over-cpp", [over_record(shas[1], WITHIN_AT_BASE), over_record(shas[2])])
    assert run_gate() == OK
    data = json.loads((out / "summary.json").read_text())
    assert data["identical"] and data["cases"] == [] and gate.exit_status(data) == OK
    text = (out / "summary.md").read_text()
    assert "The two builds are identical: the change took no call over its budget." in text
    assert "1 over (1 not yet confirmed), 0 undecided, 1 within (1 not yet confirmed)" in text
    assert "taken over" not in text
    assert (f"`{LAUNCH_16}`: over C++ +1.20 µs [+1.10 µs, +1.30 µs] (95% over one run's processes), budget 1.00 µs "
            "(default): **over**, not yet confirmed") in text
    # a budget of 1.3 µs for that operation: the interval reaches it, undecided
    (tmp_path / "budgets.json5").write_text(json.dumps({"python_over_cpp": {"operations": {LAUNCH: 1300}}}))
    assert run_gate() == OK
    assert "0 over, 1 undecided, 1 within (1 not yet confirmed)" in (out / "summary.md").read_text()


def gate_record(slower=()):
    """A paired step of b... -> h... that measured Launch('core', '16 ptr') and SetCurrent('core'): the cases
    ``slower`` flagged (×1.050 [1.040, 1.060]), the others the same (×1.004 [0.998, 1.010])."""
    from conftest import step_case, step_record

    cases = [step_case(name, 1.05, "regression", low=1.04, high=1.06) if name in slower
             else step_case(name, 1.004, low=0.998, high=1.01) for name in (LAUNCH_16, SET_CORE)]
    return step_record(base="b" * 40, head="h" * 40, cases=cases,
                       settings={"layouts": "random", "confidence": 0.95, "cores": [1], "pairs": 45}) | {
        "seconds": 1.0, "build_seconds": 0.0}


def gated(folder, data, head, base, found=None):
    """``data`` (a paired record) with its budgets judged as ``gate.gate`` judges them: the over-C++ records
    ``head`` and ``base`` (None: no record) of its two commits, written into ``folder``."""
    found = found or budgets.parse("{}")
    write_records(folder, "over-cpp", [head, *([base] if base else [])])
    return data | {"budgets": budgets.against_base(
        budgets.at_commit(folder, data["head"], found), budgets.at_commit(folder, data["base"], found),
        slower={c["name"] for c in data["cases"] if c["verdict"] == "regression"})}


def test_the_gate_fails_on_a_call_the_change_took_over_its_budget_and_on_no_other(tmp_path):
    """The head's over-C++ record puts Launch('core', '16 ptr') over its 1 µs budget, the base's within it. Where the
    paired step flags the case slower, the change took it over: exit 1, and the comment names the call, its
    budget, its interval and what it was at the base. Where the step reads the case the same (×1.004 [0.998,
    1.010]), the two over-C++ runs moved and the code did not: the call is listed with why it fails nothing. With
    the base over too, or not measured, the call is listed and nothing is taken over."""
    head = over_record("h" * 40)
    taken = gated(tmp_path, gate_record(slower={LAUNCH_16}), head, over_record("b" * 40, WITHIN_AT_BASE))
    assert gate.exit_status(taken) == REGRESSION
    (call,) = budgets.taken_over(taken["budgets"]["judged"])
    said = comment.comment(taken)
    assert call["case"] == LAUNCH_16 and "**1 taken over budget by this change.**" in said
    assert (f"`{LAUNCH_16}`: over C++ +1.20 µs [+1.10 µs, +1.30 µs] (95% over one run's processes), budget 1.00 µs "
            "(default): **over**, not yet confirmed (taken over by this change: within at the base)") in said
    noise = gated(tmp_path, gate_record(), head, over_record("b" * 40, WITHIN_AT_BASE))
    assert gate.exit_status(noise) == OK and budgets.taken_over(noise["budgets"]["judged"]) == []
    assert "**over**, not yet confirmed (within at the base; the paired step does not flag the case slower)" in (
        comment.comment(noise))
    assert "taken over budget by this change" not in comment.comment(noise)
    already = gated(tmp_path, gate_record(slower={LAUNCH_16}), head, over_record("b" * 40))
    assert budgets.taken_over(already["budgets"]["judged"]) == []
    assert "**over**, not yet confirmed (over at the base)" in comment.comment(already)
    unmeasured = gated(tmp_path, gate_record(slower={LAUNCH_16}), head, None)
    assert budgets.taken_over(unmeasured["budgets"]["judged"]) == []
    assert "(the base not judged)" in comment.comment(unmeasured)
    assert "At the base: no over-C++ record of bbbbbbbbb" in comment.comment(unmeasured)


def test_a_call_undecided_at_the_base_and_over_at_the_head_is_taken_over_where_the_step_flags_it(tmp_path):
    """Undecided at the base (its interval reaches the budget) is not over: a change the step flags slower that
    puts the call wholly above it took it over."""
    taken = gated(tmp_path, gate_record(slower={LAUNCH_16}), over_record("h" * 40),
                  over_record("b" * 40, (1000.0, 950.0, 1050.0)))
    (call,) = budgets.taken_over(taken["budgets"]["judged"])
    assert (call["case"], call["base_verdict"]) == (LAUNCH_16, "undecided")
    assert "(taken over by this change: undecided at the base)" in comment.comment(taken)


def test_the_base_verdict_is_the_same_calls_of_the_same_kind(tmp_path):
    """A cuda.core case has two budgets, over C++ and over cuda.bindings: each is held to its own verdict at the
    base. SetCurrent('core'), flagged slower, is over both at the head; at the base over C++ too, and within its
    ratio over cuda.bindings: only the second was taken over."""
    set_bindings = SET_CORE.replace("core", "bindings")
    found = budgets.parse('{python_over_cpp: {default_ns: 200}, core_over_bindings: {operations: '
                          '{"bench_device.SetCurrent.time_set_current": 1.5}}}')
    states = [10.0 + (7 * i) % 11 for i in range(60)]  # each process's ratio over the twin

    def record(commit, core_over_bindings):
        return over_cpp_record(commit=commit, versions={"cuda-bindings": "13.3.1"}, cases=[
            over_cpp_case(set_bindings, over_ns=100.0, over_low=90.0, over_high=110.0, process_ratios=states),
            over_cpp_case(SET_CORE, over_ns=300.0, over_low=250.0, over_high=350.0,
                          process_ratios=[core_over_bindings * r for r in states])])

    head, base = record("h" * 40, 1.6), record("b" * 40, 1.4)
    data = gated(tmp_path, gate_record(slower={SET_CORE}), head, base, found)
    at_head = {j["kind"]: j for j in data["budgets"]["judged"] if j["case"] == SET_CORE}
    assert {k: (j["verdict"], j["base_verdict"]) for k, j in at_head.items()} == {
        budgets.PYTHON_OVER_CPP: ("over", "over"), budgets.CORE_OVER_BINDINGS: ("over", "within")}
    assert [(j["case"], j["kind"]) for j in budgets.taken_over(data["budgets"]["judged"])] == [
        (SET_CORE, budgets.CORE_OVER_BINDINGS)]


def test_the_front_page_shows_each_call_of_mains_head_against_its_budget(tmp_path):
    """The committed history: main's head of each machine with an over-C++ run has a budget table, one row per call
    of cuda.core and cuda.bindings, its verdict the one its interval gives at the coverage it has (never undecided
    for an interval wholly beyond the budget), how it stands over the commit's runs, and counts that are the rows'
    (issue 57: the H100's 44 over · 4 undecided · 50 within); the fixture history has no over-C++ run and says
    so."""
    found = read.load(ROOT / "results")
    page = landing.document(found)
    assert page.count('<h3 class="budgets">Budgets</h3>') == len(found.machines)
    for name in found.machines:
        rows = [r for r in found.rows if r["machine"] == name]
        cells = {c["case"]: c["over_cpp"] for r in rows for c in r["cells"].values() if c.get("over_cpp")}
        for case, over in cells.items():
            if "('cupy'" in case:
                assert f'data-case="{case}" data-kind="python_over_cpp"'.replace("'", "&#x27;") not in page
                continue
            want = "over" if over["over_low"] > 1000 else "within" if over["over_high"] < 1000 else "undecided"
            row = f'data-case="{case}" data-kind="python_over_cpp" data-verdict="{want}"'.replace("'", "&#x27;")
            assert row in page, case
    assert 'data-verdict="over"' in page and "budget</th>" in page
    for part in page.split('<h3 class="budgets">Budgets</h3>')[1:]:  # each machine's: its legend, then its rows
        legend = re.search(r'<p class="budgets-legend">.*?</p>', part, re.S).group(0)
        shown = [{"verdict": v, "status": s or None}
                 for v, s in re.findall(r'data-verdict="(\w+)" data-status="([^"]*)"', part)]
        assert html.unescape(legend).endswith(f" {budgets.counts_text(shown, ' · ')}.</p>"), legend
        assert "not yet confirmed" in legend and "95%" in legend
    # the calls within their budget folded under one line; those over or undecided in the open
    folded = re.findall(r'<details class="budgets-within">(.*?)</details>', page, re.S)
    assert len(folded) == len(found.machines)
    assert all('data-verdict="within"' in f and 'data-verdict="over"' not in f for f in folded)
    outside = re.sub(r'<details class="budgets-within">.*?</details>', "", page, flags=re.S)
    assert 'data-kind="python_over_cpp" data-verdict="within"' not in outside
    site = read.load(ROOT / "tests" / "fixtures" / "site" / "results")
    assert "Budgets not judged: no over-C++ run of" in landing.document(site)


H200 = ROOT / "results" / "nvidia-h200"
#: the paired step the H200 measured between two builds of cb56ab9f9 (an A/A, a layout per process): it flags nothing
SAME_CODE = ROOT / "docs" / "evidence" / "aa-runs" / "records" / "2026-12-04T2127-aa-random.summary.json.gz"


def same_code_runs():
    """The H200's over-C++ records, and those of cb56ab9f9: one commit, 61 runs on 27 machine starts."""
    from cuda_bench.results import records

    every = records.read(H200, "over-cpp")
    return every, [r for r in every if r["commit"].startswith("cb56ab9f9")]


def test_over_cpp_runs_of_the_same_code_never_fail_the_gate():
    """The H200's over-C++ runs of cb56ab9f9, two by two as a pull request's base and head (every ordered pair), with
    the paired step the H200 measured between two builds of that commit: the runs read calls on either side of their
    budgets (the Compile, StreamCreate and AllocFree rows move across 1 µs from run to run), the code did not change,
    and the gate takes no call over. So too with the base read from every other run of the commit (a well-measured
    main) and the head from one."""
    import copy
    import gzip
    import itertools

    every, runs = same_code_runs()
    step = json.loads(gzip.open(SAME_CODE).read()) | {"kind": "pr"}
    assert step["base"] == step["head"] == runs[0]["commit"] and not gate.regressions(step)
    slower = {c["name"] for c in gate.regressions(step)}
    found = budgets.read(ROOT / "budgets.json5")
    alone = [{"commit": r["commit"], "judged": budgets.judge_runs([r], every, found)} for r in runs]
    moved = 0
    for i, j in itertools.permutations(range(len(runs)), 2):
        gated = step | {"budgets": budgets.against_base(copy.deepcopy(alone[j]), alone[i], slower)}
        judged = gated["budgets"]["judged"]
        assert budgets.taken_over(judged) == [] and gate.exit_status(gated) == OK, (i, j)
        moved += any(c["verdict"] == "over" and c["base_verdict"] in ("within", "undecided") for c in judged)
    assert moved > 0  # what the gate once failed on: a call over at the head and not at the base
    for j, run in enumerate(runs[::6]):
        others = {"commit": run["commit"],
                  "judged": budgets.judge_runs([r for r in runs if r is not run], every, found)}
        gated = step | {"budgets": budgets.against_base(copy.deepcopy(alone[6 * j]), others, slower)}
        assert budgets.taken_over(gated["budgets"]["judged"]) == [], j


def test_a_budget_verdict_stands_once_runs_on_two_machine_starts_read_it():
    """The H200's runs of cb56ab9f9: a run alone reads each call over or within as "not yet confirmed" (its interval
    holds its own processes' variation, not what its machine start fixed for the whole run), and two runs of one
    start do too; two runs on two starts confirm what both read, and where one reads a call over and the other
    within, neither verdict stands: "not reproduced"."""
    import itertools

    every, runs = same_code_runs()
    found = budgets.read(ROOT / "budgets.json5")
    slower = overcpp_read.slow_factors(runs, every)
    kind = overcpp_read.run_kind(runs[-1])
    fast = [r for r, x in zip(runs, slower) if overcpp_read.run_kind(r) == kind and not overcpp_read.in_slow_state(x)]
    by_start = {}
    for r in fast:
        by_start.setdefault(r["host"]["start"], []).append(r)
    one_start = next(rs[:2] for rs in by_start.values() if len(rs) > 1)
    for alone in ([fast[0]], one_start):
        stood = {j["status"] for j in budgets.judge_runs(alone, every, found) if j["verdict"] != "undecided"}
        assert stood == {"not yet confirmed"}
    read = {id(r): {(j["case"], j["kind"]): j["verdict"] for j in budgets.judge_runs([r], every, found)}
            for r in fast}
    seen = set()
    for a, b in itertools.combinations(fast, 2):
        if a["host"]["start"] == b["host"]["start"]:
            continue
        for j in budgets.judge_runs([a, b], every, found):
            said = {read[id(a)].get((j["case"], j["kind"])), read[id(b)].get((j["case"], j["kind"]))}
            if said in ({"over"}, {"within"}):
                assert (j["verdict"], j["status"]) == (*said, "confirmed"), j
                seen.add("confirmed")
            elif said == {"over", "within"}:
                assert j["status"] == "not reproduced", j
                seen.add("not reproduced")
        if len(seen) == 2:
            break
    assert seen == {"confirmed", "not reproduced"}


def test_the_gate_judges_the_head_from_the_runs_the_front_page_shows(tmp_path):
    """On the committed history, each machine's main head as the pull-request gate judges it
    (``budgets.at_commit``: the over-C++ records, the suite's benchmark versions) and as the front page's budget
    table judges it (from the cells of its operation table): the same calls, the same values, the same verdicts;
    with a cuda.core-over-cuda.bindings budget on every operation, so that both kinds are compared."""
    import json
    import shutil

    from conftest import ROOT

    from cuda_bench.publish import read
    from cuda_bench.publish.pages.budget_table import measured

    results = tmp_path / "results"  # one benchmark's version changed since its over-C++ runs: neither judges them
    shutil.copytree(ROOT / "results", results)
    suite = json.loads((results / "benchmarks.json").read_text())
    suite["bench_device.SetCurrent.time_set_current"]["version"] = "changed"
    (results / "benchmarks.json").write_text(json.dumps(suite))
    history = read.load(results)
    cores = {row["benchmark"] for row in history.rows if "core" in row["cells"]}
    (tmp_path / "budgets.json5").write_text(json.dumps({
        "python_over_cpp": {"default_ns": 1000, "operations": {}},
        "core_over_bindings": {"operations": dict.fromkeys(sorted(cores), 1.0)}}))
    found = budgets.read(tmp_path / "budgets.json5")
    compared = 0
    for name in history.machines:
        rows = [r for r in history.rows if r["machine"] == name]
        if not rows:
            continue
        page = budgets.judge(*measured(rows), found)
        gate = budgets.at_commit(results / name, rows[0]["commit"], found)["judged"]
        assert not any("SetCurrent" in j["case"] for j in gate)
        key = lambda j: (j["case"], j["kind"])  # noqa: E731
        assert sorted((key(j), j["value"], j["verdict"]) for j in gate) == \
            sorted((key(j), j["value"], j["verdict"]) for j in page), name
        compared += len(gate)
    assert compared > 50 and any(j["kind"] == budgets.CORE_OVER_BINDINGS for j in gate)
