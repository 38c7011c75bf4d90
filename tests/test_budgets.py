"""Budgets (budgets.json5, cuda_bench.budgets): the file read or refused with its line, verdicts only on whole
intervals, the gate's exit status 1 on a call over its budget, and the front page's table."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT, over_cpp_case, over_cpp_record, with_a_gpu, write_records
from test_plan import MACHINE, monorepo  # noqa: F401  (a fixture)

from cuda_bench import budgets, cli, comment, compare, read, results
from cuda_bench.pages import landing
from cuda_bench.status import INCOMPLETE, OK, REGRESSION

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
])
def test_a_bad_file_is_one_line_naming_the_file_its_line_and_why_and_the_command_exits_2(
        tmp_path, capsys, text, line, said):
    path = tmp_path / "budgets.json5"
    path.write_text(text)
    results.forget()
    found = budgets.read(path)
    err = capsys.readouterr().err.strip()
    assert found.error is not None and found.over_cpp == {} and said in found.error
    assert err.count("\n") == 0 and err.startswith(f"budgets: {path}:{line}: ") and said in err, err
    assert found.budget(budgets.PYTHON_OVER_CPP, SET_CORE) == (None, None)  # nothing judged against it
    assert [(p, n) for p, n, _ in results.noted()] == [(path.resolve(), line)]  # cuda_bench.cli: exit 2
    assert cli.with_unreadable(OK) == INCOMPLETE and cli.with_unreadable(REGRESSION) == REGRESSION
    results.forget()


def test_no_file_is_cuda_pythons_target_alone(tmp_path):
    found = budgets.read(tmp_path / "absent.json5")
    assert found.error is None and found.budget(budgets.PYTHON_OVER_CPP, SET_CORE) == (1000, "default")


@pytest.mark.parametrize("low, high, coverage, expected", [
    (1001, 1200, 0.95, "over"),        # the whole interval above
    (1000, 1200, 0.95, "undecided"),   # its low end on the budget
    (800, 999, 0.95, "within"),        # the whole interval below
    (800, 1000, 0.95, "undecided"),    # its high end on the budget
    (900, 1100, 0.95, "undecided"),    # across it
    (1100, 1200, 0.9, "undecided"),    # too few processes for a 95 % interval
])
def test_a_verdict_needs_the_whole_interval_on_one_side_of_the_budget(low, high, coverage, expected):
    assert budgets.verdict(low, high, 1000, coverage) == expected
    case = over_cpp_case(SET_CORE, over_ns=(low + high) / 2, over_low=low, over_high=high, coverage=coverage)
    (judged,) = budgets.judge({SET_CORE: case}, {}, budgets.parse("{}"))
    assert judged["verdict"] == expected and judged["budget"] == 1000 and judged["key"] == "default"


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
    monkeypatch.setattr(compare, "measure", lambda *a, **k: pytest.fail("identical builds were measured"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr("cuda_bench.commands.compare.RESULTS", tmp_path / "res")
    monkeypatch.setattr(budgets, "BUDGETS", tmp_path / "budgets.json5")  # absent: the default alone
    with_a_gpu(monkeypatch)  # over-C++ records, which the budgets are judged from, are a GPU machine's
    out, folder = tmp_path / "out", tmp_path / "res" / MACHINE

    def gate():
        return cli.main(["compare", shas[1], shas[2], "--repo", str(repo), "--machine", MACHINE, "--out", str(out)])

    assert gate() == OK  # no over-C++ record of the head: nothing judged, and the comment says so
    assert "Not judged: no over-C++ record of" in (out / "summary.md").read_text()
    write_records(folder, "over-cpp", [over_record(shas[1], WITHIN_AT_BASE), over_record(shas[2])])
    assert gate() == OK
    data = json.loads((out / "summary.json").read_text())
    assert data["identical"] and data["cases"] == [] and compare.exit_status(data) == OK
    text = (out / "summary.md").read_text()
    assert "The two builds are identical: the change took no call over its budget." in text
    assert "1 over, 0 undecided, 1 within" in text and "taken over" not in text
    assert f"`{LAUNCH_16}`: over C++ +1.20 µs [+1.10 µs, +1.30 µs] (95%), budget 1.00 µs (default): **over**" in text
    # a budget of 1.3 µs for that operation: the interval reaches it, undecided
    (tmp_path / "budgets.json5").write_text(json.dumps({"python_over_cpp": {"operations": {LAUNCH: 1300}}}))
    assert gate() == OK
    assert "0 over, 1 undecided, 1 within" in (out / "summary.md").read_text()


def test_the_gate_fails_on_a_call_the_change_took_over_its_budget_and_on_no_other(tmp_path):
    """A measured step that regressed nothing: the head's over-C++ record puts Launch('core', '16 ptr') over its 1 µs
    budget. Alone (nothing says the change put it there) the gate passes; with the base within the budget the
    change took it over: exit 1, and the comment names the call, its budget, its interval and what it was at the
    base; with the base over too, or not measured, the call is listed and the gate passes."""
    from conftest import step_case, step_record

    found = budgets.parse("{}")
    data = step_record(base="b" * 40, head="h" * 40, cases=[step_case(LAUNCH_16, 1.004, low=0.998, high=1.01)],
                       settings={"layouts": "random", "confidence": 0.95, "cores": [1], "pairs": 45}) | {
        "seconds": 1.0, "build_seconds": 0.0}

    def judged(base_launch):
        write_records(tmp_path, "over-cpp", [over_record("h" * 40)]
                      + ([over_record("b" * 40, base_launch)] if base_launch else []))
        head = budgets.at_commit(tmp_path, "h" * 40, found)
        return data | {"budgets": budgets.against_base(head, budgets.at_commit(tmp_path, "b" * 40, found))}

    assert compare.exit_status(data) == OK
    assert compare.exit_status(data | {"budgets": budgets.at_commit(tmp_path, "h" * 40, found)}) == OK
    taken = judged(WITHIN_AT_BASE)
    assert compare.exit_status(taken) == REGRESSION
    said = comment.comment(taken)
    assert "**1 taken over budget by this change.**" in said
    assert (f"`{LAUNCH_16}`: over C++ +1.20 µs [+1.10 µs, +1.30 µs] (95%), budget 1.00 µs (default): **over** "
            "(taken over by this change: within at the base)") in said
    already = judged((1200.0, 1100.0, 1300.0))
    assert compare.exit_status(already) == OK and "**over** (over at the base)" in comment.comment(already)
    unmeasured = judged(None)
    assert compare.exit_status(unmeasured) == OK
    assert "(the base not judged)" in comment.comment(unmeasured)
    assert "At the base: no over-C++ record of bbbbbbbbb" in comment.comment(unmeasured)


def test_the_front_page_shows_each_call_of_mains_head_against_its_budget(tmp_path):
    """The committed history: main's head of each machine with an over-C++ run has a budget table, one row per call
    of cuda.core and cuda.bindings, its verdict the one its interval gives; the fixture history has no over-C++ run
    and says so."""
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
            want = budgets.verdict(over["over_low"], over["over_high"], 1000, over["coverage"])
            row = f'data-case="{case}" data-kind="python_over_cpp" data-verdict="{want}"'.replace("'", "&#x27;")
            assert row in page, case
    assert 'data-verdict="over"' in page and "budget</th>" in page
    # the calls within their budget folded under one line; those over or undecided in the open
    folded = re.findall(r'<details class="budgets-within">(.*?)</details>', page, re.S)
    assert len(folded) == len(found.machines)
    assert all('data-verdict="within"' in f and 'data-verdict="over"' not in f for f in folded)
    outside = re.sub(r'<details class="budgets-within">.*?</details>', "", page, flags=re.S)
    assert 'data-kind="python_over_cpp" data-verdict="within"' not in outside
    site = read.load(ROOT / "tests" / "fixtures" / "site" / "results")
    assert "Budgets not judged: no over-C++ run of" in landing.document(site)
