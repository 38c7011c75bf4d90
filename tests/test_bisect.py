"""The bisect's order of measurement and its stop rule (cuda_bench.compare.bisect), on recorded steps: the H100's
one-pass window with a spin injected into ``Device.set_current`` (docs/evidence/one-pass-window): its flagged step
(``SetCurrent('core')`` ×1.042 [1.034, 1.063]) stands for a pair of commits with the slowdown between them, its
other steps (156 cases, none flagged) for a pair without. A pair is measured as the window measured them. BASE
against HEAD is measured first, as a pair of its own (the total), then the rounds."""

from __future__ import annotations

import gzip
import json
import math

import pytest
from conftest import ROOT, step_case, step_record
from test_plan import monorepo  # noqa: F401  (a fixture)

from cuda_bench.compare import bisect, summaries
from cuda_bench.foundations import stats
from cuda_bench.foundations.status import INCOMPLETE, OK, REGRESSION
from cuda_bench.foundations.text import interval
from cuda_bench.results import records

RECORDS = ROOT / "docs" / "evidence" / "one-pass-window" / "records"
WINDOW = json.loads(gzip.open(RECORDS / "injected-window.json.gz").read())
SLOWER = next(s for s in WINDOW["steps"] if any(c["verdict"] == "regression" for c in s["cases"]))
SAME = [s for s in WINDOW["steps"] if s is not SLOWER]
SET_CORE = "bench_device.SetCurrent.time_set_current('core')"
ATTRIBUTE = "bench_program.FuncGetAttribute.time_func_get_attribute('core')"  # its one improvement


def commits(n):
    return [f"{i:02d}" + "c" * 38 for i in range(n)]


def recorded(span, slower_at):
    """``measure`` for a line of commits ``span`` with the slowdown at the commits ``slower_at`` (their indices):
    each adjacent pair's step is the recorded flagged step where one of them lies between the two, else one of
    the recorded unflagged steps; ``measured`` keeps each round's commits, as indices."""
    measured = []

    def measure(commits_):
        at = [span.index(c) for c in commits_]
        measured.append(at)
        steps = []
        for k, (a, b) in enumerate(zip(at, at[1:])):
            template = SLOWER if any(a < i <= b for i in slower_at) else SAME[(a + k) % len(SAME)]
            steps.append(template | {"base": span[a], "head": span[b]})
        return steps

    return measure, measured


def test_a_long_span_is_narrowed_by_halves_then_measured_whole_where_it_fits_one_block():
    """17 commits, the slowdown at the 12th (index 11): BASE against HEAD (0, 16), the ends and the middle (0, 8,
    16), the flagged half's (8, 12, 16), then the 5 commits 8..12 in one pass (a block holds 6); the step 10 -> 11
    is the one: the answer names commit 11 with its interval, and no other."""
    span = commits(17)
    measure, measured = recorded(span, [11])
    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert measured == [[0, 16], [0, 8, 16], [8, 12, 16], [8, 9, 10, 11, 12]]
    assert [(s["base"], s["head"]) for s, _ in answer.found] == [(span[10], span[11])]
    assert answer.spread == [] and answer.timed == 13 and answer.cases == {SET_CORE: "found"}
    (line,) = bisect.answer_lines(answer, {SET_CORE}, {span[11]: "cuda.core: check the device (#1234)"})
    assert line == (f"found: {span[11][:9]} 'cuda.core: check the device (#1234)' (#1234), against "
                    f"{span[10][:9]}: {SET_CORE} ×1.042 [1.034, 1.063]")


def test_a_span_that_fits_one_block_is_one_round():
    span = commits(6)
    measure, measured = recorded(span, [3])
    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert measured == [[0, 5], [0, 1, 2, 3, 4, 5]]
    assert [s["head"] for s, _ in answer.found] == [span[3]]


def test_an_aa_span_stops_after_its_first_round_and_finds_nothing():
    """Eight harmless commits: BASE against HEAD reads the case within its threshold, and the first round's steps
    flag nothing: one round, nothing found, and the answer says so with the total's interval."""
    span = commits(9)
    measure, measured = recorded(span, [])
    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert measured == [[0, 8], [0, 4, 8]] and answer.found == [] and answer.spread == []
    assert answer.cases == {SET_CORE: "nothing"} and bisect.status_of(answer) == OK
    total = next(c for c in SAME[0]["cases"] if c["name"] == SET_CORE)
    assert bisect.answer_lines(answer, {SET_CORE}, {}) == [
        f"nothing: {SET_CORE} from {span[0][:9]} to {span[8][:9]} {interval(total)}, within its threshold "
        f"({total['threshold']:.1%}), and no step flags it"]


def test_only_the_cases_asked_for_and_only_slowdowns_lead_the_narrowing():
    """The flagged step also holds an improvement (FuncGetAttribute ×0.977): asked for that case, the bisect
    follows no half and finds nothing; asked for every case, it finds the slowdown."""
    span = commits(9)
    measure, measured = recorded(span, [5])
    assert bisect.bisect(span, measure, cases={ATTRIBUTE}).found == [] and measured == [[0, 8], [0, 4, 8]]
    measure, _ = recorded(span, [5])
    answer = bisect.bisect(span, measure)
    assert [s["head"] for s, _ in answer.found] == [span[5]] and answer.cases[SET_CORE] == "found"
    assert answer.cases[ATTRIBUTE] == "nothing" and len(answer.cases) > 100  # every case of the suite asked


def test_a_change_in_two_commits_is_answered_with_both():
    span = commits(17)
    measure, measured = recorded(span, [3, 12])
    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert sorted(span.index(s["head"]) for s, _ in answer.found) == [3, 12]
    assert measured[:2] == [[0, 16], [0, 8, 16]] and sorted(map(tuple, measured[2:4])) == [(0, 4, 8), (8, 12, 16)]


CORE, BINDINGS = "bench_launch.Launch.time_launch('core')", "bench_launch.Launch.time_launch('bindings')"


def modelled(span, slow, half=0.003, threshold=0.02, flags=None):
    """``measure`` for a line of commits ``span`` where case X between commits a < b reads the product of its
    factors at the commits a+1..b (``slow``: {X: {index: factor}}), with an interval ``half`` either side and a
    ``threshold``, flagged where its whole interval lies beyond it; ``flags`` ({(a, b): {X}}) flags a step anyway
    (a flag of noise). ``measured`` keeps each round's commits, as indices."""
    measured = []

    def measure(commits_):
        at = [span.index(c) for c in commits_]
        measured.append(at)
        steps = []
        for a, b in zip(at, at[1:]):
            cases = []
            for name, factors in slow.items():
                ratio = 1.0
                for i in range(a + 1, b + 1):
                    ratio *= factors.get(i, 1.0)
                low = ratio - half
                flag = low > 1 + threshold or name in (flags or {}).get((a, b), ())
                cases.append(step_case(name, ratio, "regression" if flag else "same", low=low, high=ratio + half,
                                       threshold=threshold))
            steps.append(step_record(base=span[a], head=span[b], cases=cases))
        return steps

    return measure, measured


def test_a_change_spread_over_commits_none_slow_enough_alone_is_said_with_the_steps_that_carry_it():
    """×1.015 at two commits of nine: BASE against HEAD reads ×1.030 [1.027, 1.033], beyond the 2 % threshold; no step
    flags it: the answer is spread, never nothing, with the steps whose intervals lie above 1 (each ×1.015 [1.012,
    1.018]), and the exit status 1. The same at ×1.005 twice reads ×1.010 across: nothing. So too where each step's
    low end is below 1 (the chained low ends miss it): the total decides."""
    span = commits(9)
    measure, measured = modelled(span, {CORE: {2: 1.015, 6: 1.015}})
    answer = bisect.bisect(span, measure, cases={CORE})
    assert measured == [[0, 8], [0, 4, 8]] and answer.found == [] and answer.unconfirmed == []
    assert answer.cases == {CORE: "spread"} and bisect.status_of(answer) == REGRESSION
    (line,) = bisect.answer_lines(answer, {CORE}, {})
    assert line == (f"spread: {CORE} got slower from {span[0][:9]} to {span[8][:9]}, ×1.030 [1.027, 1.033], beyond "
                    f"its threshold (2.0%), and no step alone flags it; over {span[0][:9]}..{span[8][:9]} (8 commits) "
                    f"the steps whose intervals lie above 1: {span[0][:9]}→{span[4][:9]} ×1.015 [1.012, 1.018]; "
                    f"{span[4][:9]}→{span[8][:9]} ×1.015 [1.012, 1.018]")
    measure, _ = modelled(span, {CORE: {2: 1.005, 6: 1.005}})
    assert bisect.bisect(span, measure, cases={CORE}).cases == {CORE: "nothing"}
    # ×1.006 at each of five commits, each step read ±0.8 %: every step's low end below 1, the total ×1.030
    span = commits(6)
    measure, _ = modelled(span, {CORE: dict.fromkeys(range(1, 6), 1.006)}, half=0.008, threshold=0.015)
    answer = bisect.bisect(span, measure, cases={CORE})
    assert answer.cases == {CORE: "spread"}
    assert "no step's interval alone lies above 1: " in bisect.answer_lines(answer, {CORE}, {})[0]


def test_each_case_gets_its_own_answer_whatever_another_cases_flags_did():
    """One round of six commits: X ×1.015 at every commit (×1.077 across), Y ×1.030 at the fourth. Y's step flags it
    (found); X is flagged nowhere alone, and is spread, not nothing, though another case was flagged in the same
    round. Then eleven commits where a flag of noise opens a half for X beside Y's real one: Y is found, X's flag
    is not confirmed (its total within the threshold), and the exit status is the worst, 1."""
    span = commits(6)
    measure, _ = modelled(span, {CORE: dict.fromkeys(range(1, 6), 1.015), BINDINGS: {3: 1.03}})
    answer = bisect.bisect(span, measure, cases={CORE, BINDINGS})
    assert answer.cases == {CORE: "spread", BINDINGS: "found"}
    record = bisect.record_of(answer, span[0], span[-1], {CORE, BINDINGS})
    step = {"base": span[0], "head": span[-1]}
    assert bisect.answered(step, CORE, [record])[0] == "spread"
    assert bisect.answered(step, BINDINGS, [record]) == ("found", [(span[3], record["found"][0]["cases"][0])])
    span = commits(11)
    measure, measured = modelled(span, {CORE: {}, BINDINGS: {3: 1.03}}, flags={(0, 5): {CORE}})
    answer = bisect.bisect(span, measure, cases={CORE, BINDINGS})
    assert measured == [[0, 10], [0, 5, 10], [0, 1, 2, 3, 4, 5]]
    assert answer.cases == {CORE: "unconfirmed", BINDINGS: "found"} and bisect.status_of(answer) == REGRESSION
    record = bisect.record_of(answer, span[0], span[-1], {CORE, BINDINGS})
    assert bisect.answered({"base": span[0], "head": span[-1]}, CORE, [record]) == (
        "unconfirmed", ([span[:6]], {"ratio": 1.0, "low": 0.997, "high": 1.003, "threshold": 0.02}))


def test_a_case_that_could_not_be_measured_is_said_so_with_the_error_never_nothing():
    """Every step, BASE against HEAD too, failed on the case (a worker died on it): the answer is "could not be
    measured" with the error, in the record and on the flag's page, and the exit status 2. A case whose total was
    measured but whose flagged half's steps all failed on it is not measured either."""
    span = commits(6)
    died = "the commit3 worker died (exit -11) during sample"

    def broken(commits_):
        return [step_record(base=a, head=b, cases=[], errors={CORE: died}) for a, b in zip(commits_, commits_[1:])]

    answer = bisect.bisect(span, broken, cases={CORE})
    assert answer.cases == {CORE: "unmeasured"} and bisect.status_of(answer) == INCOMPLETE
    assert bisect.answer_lines(answer, {CORE}, {}) == [f"could not be measured: {CORE}: {died}"]
    record = bisect.record_of(answer, span[0], span[-1], {CORE})
    told = bisect.answered({"base": span[0], "head": span[-1]}, CORE, [record])
    assert told == ("unmeasured", died)
    assert bisect.answered_text(told) == f"bisected: could not be measured ({died})"
    span = commits(11)
    measure, _ = modelled(span, {CORE: {}}, flags={(0, 5): {CORE}})

    def lost_later(commits_):
        steps = measure(commits_)
        return broken(commits_) if len(commits_) > 3 else steps

    answer = bisect.bisect(span, lost_later, cases={CORE})
    assert answer.cases == {CORE: "unmeasured"} and answer.unmeasured == {CORE: died}


def test_on_a_recorded_window_a_total_beyond_the_threshold_is_never_nothing():
    """The H100's recorded window (four unflagged steps, each case's 45 process groups): each case slowed ×1.008 at
    every step (each group's ratio times 1.008), each step judged again as the engine judges one, and BASE against
    HEAD read from the same groups (each group's ratios multiplied over the steps). Every case whose total lies
    beyond its threshold is found or spread: none is "nothing" (the steps' low ends chained missed most of them)."""
    factor, steps = 1.008, SAME
    names = [c["name"] for c in steps[0]["cases"] if not c["control"]]
    names = [n for n in names if all(any(c["name"] == n for c in s["cases"]) for s in steps)]

    def judged(case, pairs):
        ratio, low, high, coverage = stats.median_interval(pairs)
        return case | {"ratio": ratio, "low": low, "high": high, "coverage": coverage, "pairs": pairs,
                       "verdict": stats.verdict(low, high, case["threshold"])}

    slowed = [s | {"cases": [judged(c, [p * factor for p in c["pairs"]]) for c in s["cases"] if c["name"] in names]}
              for s in steps]
    span = commits(len(steps) + 1)
    total = step_record(base=span[0], head=span[-1], cases=[
        judged(c, [math.prod(pairs) for pairs in zip(*(next(x for x in s["cases"] if x["name"] == c["name"])["pairs"]
                                                        for s in slowed))])
        for c in slowed[0]["cases"]])

    def measure(commits_):
        if commits_ == [span[0], span[-1]]:
            return [total]
        return [s | {"base": a, "head": b} for s, a, b in zip(slowed, commits_, commits_[1:])]

    answer = bisect.bisect(span, measure, cases=set(names))
    slower = {c["name"] for c in total["cases"] if c["verdict"] == "regression"}
    assert len(slower) > len(names) // 2
    assert {n for n, kind in answer.cases.items() if kind in ("found", "spread")} == slower
    assert {n for n, kind in answer.cases.items() if kind == "nothing"} == set(names) - slower


def test_a_flag_that_does_not_hold_when_its_span_is_measured_again_is_said_and_not_taken_for_nothing():
    """BASE against HEAD reads the case the same; round 1 flags the step 0 -> 8 (×1.042, the recorded flag); measured
    again, its halves flag nothing: the answer says the flag was not confirmed, names it with its interval and the
    total's, and is neither a commit found nor 'nothing'; exit status 2."""
    span = commits(17)
    measure_one, measured = recorded(span, [5])

    def measure(commits_):
        steps = measure_one(commits_)
        return steps if len(measured) == 2 else [SAME[0] | {"base": s["base"], "head": s["head"]} for s in steps]

    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert measured == [[0, 16], [0, 8, 16], [0, 4, 8]] and answer.found == [] and answer.spread == []
    assert [(part[0], part[-1]) for part, *_ in answer.unconfirmed] == [(span[0], span[8])]
    assert answer.cases == {SET_CORE: "unconfirmed"} and bisect.status_of(answer) == INCOMPLETE
    (line,) = bisect.answer_lines(answer, {SET_CORE}, {})
    total = bisect.total_of(answer, SET_CORE)
    assert line == (f"not confirmed: {span[0][:9]}→{span[8][:9]} flagged {SET_CORE} ×1.042 [1.034, 1.063], but "
                    f"measured again its 8 commits flag nothing, and from {span[0][:9]} to {span[16][:9]} it reads "
                    f"{interval(total)}, within its threshold: measure the span again (a machine start of its own), "
                    "or take it as noise")
    record = bisect.record_of(answer, span[0], span[-1], {SET_CORE})
    assert record["unconfirmed"] == [{"commits": span[:9], "cases": [SET_CORE]}]
    step = {"base": span[0], "head": span[-1]}
    assert bisect.answered(step, SET_CORE, [record]) == ("unconfirmed", ([span[:9]], total))


def test_a_pull_request_is_read_from_a_squash_merges_title():
    assert bisect.pr_of("cuda.core: retain graph attachments with per-node user objects (#2357)") == 2357
    assert bisect.pr_of("Merge branch 'main'") is None and bisect.pr_of(None) is None


def test_by_halves_alone_a_flagged_step_is_the_answer_only_where_it_joins_adjacent_commits():
    """With one commit to a block (``fits`` 2): 9 commits, the slowdown at 6: (0, 8), (0, 4, 8), (4, 6, 8), (4, 5, 6);
    the step 4 -> 6 flagged in the third round spans two commits and is narrowed again: the answer is 5 -> 6."""
    span = commits(9)
    measure, measured = recorded(span, [6])
    answer = bisect.bisect(span, measure, cases={SET_CORE}, fits=2)
    assert measured == [[0, 8], [0, 4, 8], [4, 6, 8], [4, 5, 6]]
    assert [(span.index(s["base"]), span.index(s["head"])) for s, _ in answer.found] == [(5, 6)]


def test_on_the_scripted_machine_the_window_engine_leads_the_bisect_to_the_commit_with_the_slowdown(tmp_path):
    """The bisect over the one-pass window engine itself (window.run, each adjacent pair judged from the same
    rounds) on test_paired's scripted machine (a core whose speed jumps between full and half for hundreds of
    milliseconds): 13 commits, a +10 % slowdown of one case from the 10th on; BASE against HEAD and each round are
    windows of real paired steps, and the bisect names the 10th commit alone, the case's interval around ×1.10."""
    from test_paired import CASES, INJECTED
    from test_window import scripted_maker, slowed

    from cuda_bench.compare import paired, window

    span = commits(13)
    costs_of = {f"commit{i}": slowed(CASES, INJECTED, 1.10) if i >= 9 else CASES for i in range(13)}
    names = [INJECTED, "bench_sim.Op0.time_op0('core')"]
    measured = []

    def measure(commits_):
        measured.append([span.index(c) for c in commits_])
        sides = [paired.Side(f"commit{span.index(c)}", c[:9], c, "python") for c in commits_]
        report = window.run(sides, names, paired.Settings(pairs=8, seconds=0.02), tmp_path / str(len(measured)),
                            {}, progress=lambda m: None, cores=[0, 1], make_worker=scripted_maker(costs_of, {}))
        return [summaries.summary(step, "step") for step in report.steps]

    answer = bisect.bisect(span, measure, cases={INJECTED})
    assert measured == [[0, 12], [0, 6, 12], [6, 9, 12], [6, 7, 8, 9]]
    assert answer.cases == {INJECTED: "found"}
    ((step, _),) = answer.found
    assert (step["base"], step["head"]) == (span[8], span[9])
    (case,) = bisect.flagged(step, {INJECTED})
    assert case["low"] < 1.10 < case["high"] or abs(case["ratio"] - 1.10) < 0.01


def test_on_the_scripted_machine_a_slowdown_spread_over_commits_is_found_by_its_total(tmp_path):
    """Six commits on the scripted machine, one case 0.8 % slower at each of five (×1.041 across): no step's interval
    reaches the 2 % threshold, BASE against HEAD measured as a pair does, and the answer is spread, with each step
    that carries it; the other case, unchanged, is nothing."""
    from test_paired import CASES, INJECTED
    from test_window import scripted_maker, slowed

    from cuda_bench.compare import paired, window

    span = commits(6)
    costs_of = {f"commit{i}": slowed(CASES, INJECTED, 1.008 ** i) for i in range(6)}
    names = [INJECTED, "bench_sim.Op0.time_op0('core')"]
    measured = []

    def measure(commits_):
        measured.append([span.index(c) for c in commits_])
        sides = [paired.Side(f"commit{span.index(c)}", c[:9], c, "python") for c in commits_]
        report = window.run(sides, names, paired.Settings(pairs=8, seconds=0.02), tmp_path / str(len(measured)),
                            {}, progress=lambda m: None, cores=[0, 1], make_worker=scripted_maker(costs_of, {}))
        return [summaries.summary(step, "step") for step in report.steps]

    answer = bisect.bisect(span, measure, cases=set(names))
    assert measured == [[0, 5], [0, 1, 2, 3, 4, 5]] and answer.found == []
    assert answer.cases == {INJECTED: "spread", names[1]: "nothing"}
    total = bisect.total_of(answer, INJECTED)
    assert total["low"] > 1.02 and total["low"] < 1.008 ** 5 < total["high"] or abs(total["ratio"] - 1.041) < 0.01


def test_a_flag_over_several_commits_names_the_command_that_finds_the_commit_and_once_bisected_the_commit():
    """On the Regressions page and in the nightly issue: a flag whose step spans four commits of main gives the
    `cuda-bench bisect` that finds which (a flag between adjacent commits gives none: the head did it); once a
    bisect of that step answered (its record, of the shape records.SHAPES holds), the commit it found, with the
    case's ratio and interval; a bisect that found nothing says so with the case's total; a bisect that asked
    about other cases answers nothing of this one."""
    import html

    from conftest import step_case as case_of

    from cuda_bench.publish import report, summary
    from cuda_bench.publish.pages import regressions as regressions_page
    from cuda_bench.results import records

    def sha(n):
        return (n * 40)[:40]

    known = {sha(n): {"title": "", "date": 0, "tags": [], "position": 10 + int(n), "recorded": True}
             for n in "12345"}
    wide = step_record(base=sha("1"), head=sha("4"), cases=[case_of(SET_CORE, 1.05, "regression")])
    narrow = step_record(base=sha("4"), head=sha("5"), cases=[case_of(ATTRIBUTE, 1.03, "regression")],
                         date="2026-12-04T13:00:00Z")
    flags = summary.regressions([wide, narrow], known)
    command = f"cuda-bench bisect {sha('1')[:12]} {sha('4')[:12]} -b '^bench_device\\.SetCurrent\\.time_set_current'"

    def said(bisects):
        page = regressions_page.render_regressions("m", flags, known, bisects=bisects)
        issue, _ = report.issue_body({"m": [wide, narrow]}, known=known, bisects_by_machine={"m": bisects})
        return html.unescape(page), issue

    page, issue = said([])
    assert page.count('class="bisect"') == 1 and f"which commit: <code>{command}</code>" in page
    assert f"which commit: `{command}`" in issue and issue.count("which commit") == 1

    def kept(answer, cases, date):
        record = bisect.record_of(answer, sha("1"), sha("4"), cases) | {
            "date": date, "seconds": 1.0, "command": None, "machine": {}}
        return records.check(records.stamped(record, "bisect"), "bisect")

    total = step_record(base=sha("1"), head=sha("4"), cases=[case_of(SET_CORE, 1.05, "regression")])
    found = bisect.Answer(total=total, found=[(step_record(base=sha("2"), head=sha("3"), cases=[
        case_of(SET_CORE, 1.05, "regression", low=1.04, high=1.06)]), [SET_CORE])], cases={SET_CORE: "found"},
        rounds=[([sha(n) for n in "1234"], [])])
    record = kept(found, {SET_CORE}, "2026-12-06T10:00:00Z")
    page, issue = said([record])
    assert f'data-found="{sha("3")}"' in page and "bisected: " in page and "×1.050 [1.040, 1.060]" in page
    assert command not in page and f"bisected: `{sha('3')[:9]}` ×1.050 [1.040, 1.060]" in issue

    same = step_record(base=sha("1"), head=sha("4"), cases=[case_of(SET_CORE, 1.002, low=0.998, high=1.006)])
    nothing = kept(bisect.Answer(total=same, cases={SET_CORE: "nothing"}), None, "2026-12-06T11:00:00Z")
    page, issue = said([record, nothing])  # the newest answer
    said_nothing = "bisected: no commit made it slower (base to head ×1.002 [0.998, 1.006])"
    assert said_nothing in page and said_nothing in issue
    # a newer bisect of the same step that asked about another case answers nothing of this one
    other = kept(bisect.Answer(total=same, cases={ATTRIBUTE: "nothing"}), {ATTRIBUTE}, "2026-12-06T12:00:00Z")
    assert bisect.answered(wide, SET_CORE, [record, nothing, other]) == bisect.answered(wide, SET_CORE,
                                                                                        [record, nothing])
    assert bisect.answered(wide, SET_CORE, [other]) is None


def passes_of(monkeypatch, measure):
    """The command's one-pass windows made of ``measure``'s step records: each block a pass of 2 s after 1 s of
    builds, kept in its folder as a window keeps it."""
    from types import SimpleNamespace

    from cuda_bench.compare import onepass

    def measure_parts(conf, repo_, commits_, parts, *, kept, **kw):
        for k, part in enumerate(parts):
            kept(k, SimpleNamespace(commits=[commits_[i] for i in part], revs=[commits_[i] for i in part],
                                    per_commit=[], blocks=[], seconds=2.0, build_seconds=1.0))
        return 1.0

    monkeypatch.setattr(onepass, "measure_parts", measure_parts)
    monkeypatch.setattr(onepass, "step_records", lambda found, *a, **kw: measure(found.commits))


def test_the_command_answers_with_the_commit_its_title_and_keeps_its_rounds_and_the_answer(
        monorepo, tmp_path, monkeypatch, capsys):  # noqa: F811
    """`cuda-bench bisect` on a cuda-python-shaped repository of six commits (one block: one round), each round's
    steps those the window recorded, the slowdown at the fourth commit: exit status 1, the commit named with its
    title and the case's interval, the rounds and the answer kept in --out, the answer in the history."""

    from conftest import with_a_gpu
    from test_plan import MACHINE

    from cuda_bench import cli

    repo, shas = monorepo
    measure, measured = recorded(shas, [3])
    passes_of(monkeypatch, measure)
    monkeypatch.setattr("cuda_bench.commands.bisect.RESULTS", tmp_path / "results")
    monkeypatch.setenv("HOME", str(tmp_path))
    with_a_gpu(monkeypatch)
    out = tmp_path / "out"
    status = cli.main(["bisect", shas[0], shas[5], "-b", "SetCurrent", "--repo", str(repo), "--machine", MACHINE,
                       "--out", str(out)])
    said, err = capsys.readouterr()
    assert status == 1 and measured == [[0, 5], [0, 1, 2, 3, 4, 5]], err
    assert f"found: {shas[3][:9]} 'bindings', against {shas[2][:9]}: {SET_CORE} ×1.042 [1.034, 1.063]" in said
    assert f"BASE against HEAD and 1 rounds, 8 commit timings, 6 s on {MACHINE}" in said
    kept = json.loads((out / "bisect.json").read_text())
    assert kept["found"][0]["head"] == shas[3] and kept["rounds"] == [[shas[0], shas[5]], shas]
    assert kept["answers"][SET_CORE]["answer"] == "found"
    (answer,) = records.read(tmp_path / "results" / MACHINE, "bisect")  # the flag's page and the issue name it
    assert answer["found"][0]["head"] == shas[3]
    # the same bisect again: every round is kept in --out, nothing is measured, and the history gets no second answer
    assert cli.main(["bisect", shas[0], shas[5], "-b", "SetCurrent", "--repo", str(repo), "--machine", MACHINE,
                     "--out", str(out)]) == 1
    assert measured == [[0, 5], [0, 1, 2, 3, 4, 5]] and "nothing measured now" in capsys.readouterr().err
    assert len(records.read(tmp_path / "results" / MACHINE, "bisect")) == 1


def test_the_command_exits_2_on_a_flag_that_does_not_hold_and_says_it(
        monorepo, tmp_path, monkeypatch, capsys):  # noqa: F811
    """`cuda-bench bisect --block 3` over six commits: BASE against HEAD reads the case the same, round 1 (0, 2, 5)
    flags 2 -> 5 (a flag of noise), and the half measured again (2, 3, 5) flags nothing: the case's answer is not
    confirmed, said in its line, kept in bisect.json, and the command exits 2 (something to measure again), not
    0."""

    from conftest import with_a_gpu
    from test_plan import MACHINE

    from cuda_bench import cli

    repo, shas = monorepo
    rounds = []

    def measure(commits_):
        rounds.append([shas.index(c) for c in commits_])
        return [(SLOWER if rounds[-1] == [0, 2, 5] and (a, b) == (shas[2], shas[5]) else SAME[0])
                | {"base": a, "head": b} for a, b in zip(commits_, commits_[1:])]

    passes_of(monkeypatch, measure)
    with_a_gpu(monkeypatch)
    monkeypatch.setattr("cuda_bench.commands.bisect.RESULTS", tmp_path / "results")
    monkeypatch.setenv("HOME", str(tmp_path))
    out = tmp_path / "out"
    status = cli.main(["bisect", shas[0], shas[5], "-b", "SetCurrent", "--block", "3", "--repo", str(repo),
                       "--machine", MACHINE, "--out", str(out)])
    said, err = capsys.readouterr()
    assert status == 2 and rounds == [[0, 5], [0, 2, 5], [2, 3, 5]], err
    assert f"not confirmed: {shas[2][:9]}→{shas[5][:9]} flagged {SET_CORE} ×1.042 [1.034, 1.063]" in said
    assert json.loads((out / "bisect.json").read_text())["answers"][SET_CORE]["answer"] == "unconfirmed"


def test_a_base_off_heads_first_parent_line_is_refused_with_the_commit_to_start_from(tmp_path, monkeypatch, capsys):
    """A release tag on a branch of its own is not where main's line after it starts: pairing it with main's next
    commit would put the branch's backports on that commit. The command stops in one line (exit 3), naming the
    commit where the release's branch leaves main, and measures nothing."""
    from conftest import git, with_a_gpu

    from cuda_bench import cli
    from cuda_bench.compare import onepass

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")

    def commit_(message):
        (repo / "f").write_text(message)
        git(repo, "add", "f")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
        return git(repo, "rev-parse", "HEAD")

    commit_("1")
    fork = commit_("2")
    git(repo, "checkout", "-q", "-b", "release")
    commit_("a backport")
    git(repo, "tag", "v1")
    git(repo, "checkout", "-q", "main")
    commit_("3")
    commit_("4")
    monkeypatch.setattr(onepass, "measure_parts", lambda *a, **k: pytest.fail("measured"))
    monkeypatch.setenv("HOME", str(tmp_path))
    with_a_gpu(monkeypatch)
    assert cli.main(["bisect", "v1", "main", "--repo", str(repo), "--machine", "m", "--out", str(tmp_path / "o")]) == 3
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"bench: v1 is not on HEAD's first-parent line (a release branch?): bisect from the commit where "
                   f"its line leaves it, {fork[:12]}")
