"""The bisect's order of measurement and its stop rule (cuda_bench.bisect), on recorded steps: the H100's one-pass
window with a spin injected into ``Device.set_current`` (docs/evidence/one-pass-window): its flagged step
(``SetCurrent('core')`` ×1.042 [1.034, 1.063]) stands for a pair of commits with the slowdown between them, its
other steps (156 cases, none flagged) for a pair without. A pair is measured as the window measured them."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import ROOT, step_case, step_record
from test_plan import monorepo  # noqa: F401  (a fixture)

from cuda_bench import bisect, records

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
    """17 commits, the slowdown at the 12th (index 11): the ends and the middle (0, 8, 16), the flagged half's
    (8, 12, 16), then the 5 commits 8..12 in one pass (a block holds 6); the step 10 -> 11 is the one: the
    answer names commit 11 with its interval, and no other."""
    span = commits(17)
    measure, measured = recorded(span, [11])
    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert measured == [[0, 8, 16], [8, 12, 16], [8, 9, 10, 11, 12]]
    assert [(s["base"], s["head"]) for s in answer.found] == [(span[10], span[11])]
    assert answer.spread == [] and answer.timed == 11
    (line,) = bisect.answer_lines(answer, {SET_CORE}, {span[11]: "cuda.core: check the device (#1234)"})
    assert line == (f"found: {span[11][:9]} 'cuda.core: check the device (#1234)' (#1234), against "
                    f"{span[10][:9]}: {SET_CORE} ×1.042 [1.034, 1.063]")


def test_a_span_that_fits_one_block_is_one_round():
    span = commits(6)
    measure, measured = recorded(span, [3])
    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert measured == [[0, 1, 2, 3, 4, 5]]
    assert [s["head"] for s in answer.found] == [span[3]]


def test_an_aa_span_stops_after_its_first_round_and_finds_nothing():
    """Eight harmless commits: the first round's steps flag nothing, their ratios chained stay within the
    thresholds: one round, nothing found, and the answer says so."""
    span = commits(9)
    measure, measured = recorded(span, [])
    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert measured == [[0, 4, 8]] and answer.found == [] and answer.spread == []
    assert bisect.answer_lines(answer, {SET_CORE}, {}) == [
        "found nothing: no step flags a case, and no case got slower across the steps"]


def test_only_the_cases_asked_for_and_only_slowdowns_lead_the_narrowing():
    """The flagged step also holds an improvement (FuncGetAttribute ×0.977): asked for that case, the bisect
    follows no half and finds nothing; asked for every case, it finds the slowdown."""
    span = commits(9)
    measure, measured = recorded(span, [5])
    assert bisect.bisect(span, measure, cases={ATTRIBUTE}).found == [] and measured == [[0, 4, 8]]
    measure, _ = recorded(span, [5])
    assert [s["head"] for s in bisect.bisect(span, measure).found] == [span[5]]


def test_a_change_in_two_commits_is_answered_with_both():
    span = commits(17)
    measure, measured = recorded(span, [3, 12])
    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert sorted(span.index(s["head"]) for s in answer.found) == [3, 12]
    assert measured[0] == [0, 8, 16] and sorted(map(tuple, measured[1:3])) == [(0, 4, 8), (8, 12, 16)]


def test_a_change_spread_over_commits_none_slow_enough_alone_is_said_with_each_steps_interval():
    """Two steps of ×1.015 [1.012, 1.018] each (under a 2 % threshold: same): their low ends chained, ×1.024, lie
    beyond it, as a flag's whole interval must: no half is followed, and the answer names the span as one the
    change is spread over, with each step's interval. The same ratios with intervals of ±1 % chain to a low end
    of ×1.010, within the threshold: nothing found. One step alone is never called spread."""
    span = commits(9)

    def measure_with(ratio, half_width):
        def measure(commits_):
            return [step_record(base=a, head=b, cases=[step_case(SET_CORE, ratio, threshold=0.02,
                                                                 low=ratio - half_width, high=ratio + half_width)])
                    for a, b in zip(commits_, commits_[1:])]
        return measure

    answer = bisect.bisect(span, measure_with(1.015, 0.003), cases={SET_CORE})
    assert answer.found == [] and answer.unconfirmed == [] and [part for part, _ in answer.spread] == [span]
    (line,) = bisect.answer_lines(answer, {SET_CORE}, {})
    assert line.startswith(f"spread over {span[0][:9]}..{span[-1][:9]} (8 commits): no step alone flags "
                           f"{SET_CORE} (chained ×1.030, its steps' low ends chained ×1.024); its steps: ")
    assert line.count("×1.015 [1.012, 1.018]") == 2
    assert bisect.bisect(span, measure_with(1.015, 0.010), cases={SET_CORE}).spread == []
    assert bisect.spread_cases(measure_with(1.04, 0.003)(span[:2]), {SET_CORE}) == {}  # one step: a flag's job


def test_a_flag_that_does_not_hold_when_its_span_is_measured_again_is_said_and_not_taken_for_nothing():
    """Round 1 flags the step 0 -> 8 (×1.042, the recorded flag); measured again, its halves flag nothing and chain
    to no slowdown: the answer says the flag was not confirmed, names it with its interval, and is neither a
    commit found nor 'found nothing'."""
    span = commits(17)
    measure_one, measured = recorded(span, [5])
    calls = []

    def measure(commits_):
        calls.append(commits_)
        steps = measure_one(commits_)
        return steps if len(calls) == 1 else [SAME[0] | {"base": s["base"], "head": s["head"]} for s in steps]

    answer = bisect.bisect(span, measure, cases={SET_CORE})
    assert measured == [[0, 8, 16], [0, 4, 8]] and answer.found == [] and answer.spread == []
    assert [(part[0], part[-1]) for part, _ in answer.unconfirmed] == [(span[0], span[8])]
    (line,) = bisect.answer_lines(answer, {SET_CORE}, {})
    assert line.startswith(f"not confirmed: {span[0][:9]}→{span[8][:9]} flagged {SET_CORE} ×1.042 [1.034, 1.063], "
                           "but measured again its 8 commits flag nothing")
    record = bisect.record_of(answer, span[0], span[-1], {SET_CORE})
    assert record["unconfirmed"] == [{"commits": span[:9], "cases": [SET_CORE]}]
    step = {"base": span[0], "head": span[-1]}
    assert bisect.answered(step, SET_CORE, [record]) == ("unconfirmed", [span[:9]])


def test_a_pull_request_is_read_from_a_squash_merges_title():
    assert bisect.pr_of("cuda.core: retain graph attachments with per-node user objects (#2357)") == 2357
    assert bisect.pr_of("Merge branch 'main'") is None and bisect.pr_of(None) is None


def test_by_halves_alone_a_flagged_step_is_the_answer_only_where_it_joins_adjacent_commits():
    """With one commit to a block (``fits`` 2): 9 commits, the slowdown at 6: (0, 4, 8), (4, 6, 8), (4, 5, 6); the
    step 4 -> 6 flagged in the second round spans two commits and is narrowed again: the answer is 5 -> 6."""
    span = commits(9)
    measure, measured = recorded(span, [6])
    answer = bisect.bisect(span, measure, cases={SET_CORE}, fits=2)
    assert measured == [[0, 4, 8], [4, 6, 8], [4, 5, 6]]
    assert [(span.index(s["base"]), span.index(s["head"])) for s in answer.found] == [(5, 6)]


def test_on_the_scripted_machine_the_window_engine_leads_the_bisect_to_the_commit_with_the_slowdown(tmp_path):
    """The bisect over the one-pass window engine itself (window.run, each adjacent pair judged from the same
    rounds) on test_paired's scripted machine (a core whose speed jumps between full and half for hundreds of
    milliseconds): 13 commits, a +10 % slowdown of one case from the 10th on; each round is a window of real
    paired steps, and the bisect names the 10th commit alone, the case's interval around ×1.10."""
    from test_paired import CASES, INJECTED
    from test_window import scripted_maker, slowed

    from cuda_bench import compare, paired, window

    span = commits(13)
    costs_of = {f"commit{i}": slowed(CASES, INJECTED, 1.10) if i >= 9 else CASES for i in range(13)}
    names = [INJECTED, "bench_sim.Op0.time_op0('core')"]
    measured = []

    def measure(commits_):
        measured.append([span.index(c) for c in commits_])
        sides = [paired.Side(f"commit{span.index(c)}", c[:9], c, "python") for c in commits_]
        report = window.run(sides, names, paired.Settings(pairs=8, seconds=0.02), tmp_path / str(len(measured)),
                            {}, progress=lambda m: None, cores=[0, 1], make_worker=scripted_maker(costs_of, {}))
        return [compare.summary(step, "step") for step in report.steps]

    answer = bisect.bisect(span, measure, cases={INJECTED})
    assert measured == [[0, 6, 12], [6, 9, 12], [6, 7, 8, 9]]
    (step,) = answer.found
    assert (step["base"], step["head"]) == (span[8], span[9])
    (case,) = bisect.flagged(step, {INJECTED})
    assert case["low"] < 1.10 < case["high"] or abs(case["ratio"] - 1.10) < 0.01


def test_a_flag_over_several_commits_names_the_command_that_finds_the_commit_and_once_bisected_the_commit():
    """On the Regressions page and in the nightly issue: a flag whose step spans four commits of main gives the
    `cuda-bench bisect` that finds which (a flag between adjacent commits gives none: the head did it); once a
    bisect of that step answered (its record, of the shape records.SHAPES holds), the commit it found, with the
    case's ratio and interval; a bisect that found nothing says so."""
    import html

    from conftest import step_case as case_of

    from cuda_bench import records, report, summary
    from cuda_bench.pages import regressions as regressions_page

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

    found = bisect.Answer(found=[step_record(base=sha("2"), head=sha("3"), cases=[
        case_of(SET_CORE, 1.05, "regression", low=1.04, high=1.06)])], rounds=[([sha(n) for n in "1234"], [])])
    record = bisect.record_of(found, sha("1"), sha("4"), {SET_CORE}) | {
        "date": "2026-12-06T10:00:00Z", "seconds": 1.0, "command": None, "machine": {}}
    record = records.check(records.stamped(record, "bisect"), "bisect")
    page, issue = said([record])
    assert f'data-found="{sha("3")}"' in page and "bisected: " in page and "×1.050 [1.040, 1.060]" in page
    assert command not in page and f"bisected: `{sha('3')[:9]}` ×1.050 [1.040, 1.060]" in issue

    nothing = records.check(records.stamped(bisect.record_of(bisect.Answer(rounds=[([sha("1"), sha("4")], [])]),
                                                             sha("1"), sha("4"), None)
                                            | {"date": "2026-12-06T11:00:00Z", "seconds": 1.0, "command": None,
                                               "machine": {}}, "bisect"), "bisect")
    page, issue = said([record, nothing])  # the newest answer
    assert "bisected: no commit made it slower" in page and "bisected: no commit made it slower" in issue


def test_the_command_answers_with_the_commit_its_title_and_keeps_its_rounds_and_the_answer(
        monorepo, tmp_path, monkeypatch, capsys):  # noqa: F811
    """`cuda-bench bisect` on a cuda-python-shaped repository of six commits (one block: one round), each round's
    steps those the window recorded, the slowdown at the fourth commit: exit status 1, the commit named with its
    title and the case's interval, the rounds and the answer kept in --out, the answer in the history."""
    from types import SimpleNamespace

    from conftest import with_a_gpu
    from test_plan import MACHINE

    from cuda_bench import cli, onepass

    repo, shas = monorepo
    measure, measured = recorded(shas, [3])
    monkeypatch.setattr(onepass, "measure_commits", lambda repo_, commits_, **kw: SimpleNamespace(
        commits=commits_, seconds=2.0, build_seconds=1.0))
    monkeypatch.setattr(onepass, "step_records", lambda found, *a, **kw: measure(found.commits))
    monkeypatch.setattr(onepass, "write", lambda out, found, steps: None)
    monkeypatch.setattr("cuda_bench.commands.bisect.RESULTS", tmp_path / "results")
    monkeypatch.setenv("HOME", str(tmp_path))
    with_a_gpu(monkeypatch)
    out = tmp_path / "out"
    status = cli.main(["bisect", shas[0], shas[5], "-b", "SetCurrent", "--repo", str(repo), "--machine", MACHINE,
                       "--out", str(out)])
    said, err = capsys.readouterr()
    assert status == 1 and measured == [[0, 1, 2, 3, 4, 5]], err
    assert f"found: {shas[3][:9]} 'bindings', against {shas[2][:9]}: {SET_CORE} ×1.042 [1.034, 1.063]" in said
    assert f"1 rounds, 6 commit timings, 3 s on {MACHINE}" in said
    kept = json.loads((out / "bisect.json").read_text())
    assert kept["found"][0]["head"] == shas[3] and kept["rounds"] == [shas]
    (answer,) = records.read(tmp_path / "results" / MACHINE, "bisect")  # the flag's page and the issue name it
    assert answer["found"][0]["head"] == shas[3]


def test_a_base_off_heads_first_parent_line_is_refused_with_the_commit_to_start_from(tmp_path, monkeypatch, capsys):
    """A release tag on a branch of its own is not where main's line after it starts: pairing it with main's next
    commit would put the branch's backports on that commit. The command stops in one line (exit 3), naming the
    commit where the release's branch leaves main, and measures nothing."""
    from conftest import git, with_a_gpu

    from cuda_bench import cli, onepass

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
    monkeypatch.setattr(onepass, "measure_commits", lambda *a, **k: pytest.fail("measured"))
    monkeypatch.setenv("HOME", str(tmp_path))
    with_a_gpu(monkeypatch)
    assert cli.main(["bisect", "v1", "main", "--repo", str(repo), "--machine", "m", "--out", str(tmp_path / "o")]) == 3
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"bench: v1 is not on HEAD's first-parent line (a release branch?): bisect from the commit where "
                   f"its line leaves it, {fork[:12]}")
