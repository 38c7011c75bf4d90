"""The edges of a history that the fixture histories do not reach, each with its known answer.

* the numbers around a verdict: a chain's band where a step is walked backwards, the time per call
  in ns, the dates in UTC whatever the machine's zone, asv's list (medians, no change) and
  regressions.json as the paired steps say;
* ordering and tie-breaks: several release tags on one commit, releases tagged out of version order,
  a merge whose commit date is older than the commit before it on main, several steps into one head,
  several counts records of one commit, flags of several steps;
* values exactly at a threshold and just either side of it;
* hostile text in a flagged case's name, in what a step lost and in a record that cannot be read;
* ``cuda-bench upgrade`` of schema-1 records holding every optional field, and a re-run after a
  benchmark's version changed.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import shutil
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import asv_conf, over_cpp_case, over_cpp_record, run_module, step_case, step_record

from cuda_bench.foundations.names import split_case
from cuda_bench.foundations.stats import MAX_THRESHOLD, MIN_THRESHOLD, verdict
from cuda_bench.foundations.text import fmt, number
from cuda_bench.publish import asv_kept, report, summary
from cuda_bench.publish.pages import html as pages_html
from cuda_bench.publish.pages import landing as landing_page
from cuda_bench.results import asv_files, history, overcpp_read, records

SITE = Path(__file__).parent / "fixtures" / "site" / "results"
EVENT = "bench_event.EventCreate.time_event_create('core')"
QUERY = "bench_event.EventQuery.time_event_query('core')"
LAUNCH = "bench_launch.Launch.time_launch('core', '16 ptr')"


def sha(name):
    return (name * 40)[:40]


def commit(tags=(), date=0, position=None, title=""):
    """A commit as ``asv_files.commits`` reads it from commits.json."""
    return {"title": title, "date": date, "tags": list(tags), "position": position,
            "recorded": True}


def run_of(name, started=0):
    """An asv results file of commit ``name`` as ``asv_files.load`` reads it: nothing measured but
    when."""
    return {"commit_hash": sha(name), "params": {}, "date": 0,
            "result_columns": ["result", "started_at"],
            "results": {"bench_x.X.time_x": [[1e-6], started]}}


def step(base, head, *cases, **overrides):
    return step_record(base=sha(base), head=sha(head), cases=list(cases), **overrides)


# --- the numbers around a verdict ---------------------------------------------------------------
def test_a_chain_walked_backwards_divides_by_the_ratio_and_its_band_by_the_interval_ends():
    """a -> c ×1.2 [1.1, 1.3] and b -> c ×1.1 [1.05, 1.2]: from a, c is reached forwards and b
    backwards from c; b's value is 1.2 / 1.1, its band from 1.1 / 1.2 (the low end over the other
    step's high end) to 1.3 / 1.05, and every band holds its value."""
    steps = [step("a", "c", step_case(EVENT, 1.2, low=1.1, high=1.3)),
             step("b", "c", step_case(EVENT, 1.1, low=1.05, high=1.2))]
    chain = history.chains(steps, [sha("a"), sha("b"), sha("c")])[EVENT]["13.3.1 wheel"]
    assert chain[sha("a")] == (1.0, 1.0, 1.0, sha("a"), 0)
    assert chain[sha("c")] == pytest.approx((1.2, 1.1, 1.3, sha("a"), 1))
    assert chain[sha("b")][:3] == pytest.approx((1.2 / 1.1, 1.1 / 1.2, 1.3 / 1.05))
    assert all(low <= value <= high for value, low, high, _, _ in chain.values())


def test_a_chain_multiplies_the_steps_of_one_build_and_restarts_where_the_build_changes():
    """a -> b with the 12.9.10 wheel (×2), b -> c across the wheel change 12.9.10 -> 13.3.1 (×3), c -> d with
    the 13.3.1 wheel (×1.1), and c -> d again with cuda_bindings built from each commit (×0.9): one chain per
    build, each from ×1 at its first commit. The step across the change is no link of any chain, and d stands at
    ×1.1 on the wheel's chain and ×0.9 on the built one's, never a product of the two."""
    auto = {"bindings": "auto"}
    steps = [step("a", "b", step_case(EVENT, 2.0), versions=wheels("12.9.10", "12.9.10"), **auto),
             step("b", "c", step_case(EVENT, 3.0), versions=wheels("12.9.10", "13.3.1"), **auto),
             step("c", "d", step_case(EVENT, 1.1)),
             step("c", "d", step_case(EVENT, 0.9), bindings="source",
                  versions=wheels("13.4.0.post1+gc", "13.4.0.post1+gd"))]
    assert [history.family(s) for s in steps] == ["12.9.10 wheel", None, "13.3.1 wheel", "built from the commit"]
    chains = history.chains(steps, [sha(n) for n in "abcd"])[EVENT]
    values = {build: {c: v[0] for c, v in chain.items()} for build, chain in chains.items()}
    assert values == {"12.9.10 wheel": {sha("a"): 1.0, sha("b"): 2.0},
                      "13.3.1 wheel": {sha("c"): 1.0, sha("d"): 1.1},
                      "built from the commit": {sha("c"): 1.0, sha("d"): 0.9}}
    assert chains["13.3.1 wheel"][sha("d")][3:] == (sha("c"), 1)


def test_of_two_steps_into_mains_head_the_page_shows_the_one_of_the_heads_own_build():
    """c -> d paired with the 13.3.1 wheel after it was paired with cuda_bindings built from each commit: where d is
    shown as its build from the commit, its previous step is the built one, though the wheel's was made last; where
    d is shown as the wheel's build, the wheel's."""
    known = {sha("c"): commit(position=1), sha("d"): commit(position=2)}
    built = step("c", "d", bindings="source", versions=wheels("13.4.0.post1+gc", "13.4.0.post1+gd"),
                 date="2026-12-04T10:00:00Z")
    wheel = step("c", "d", date="2026-12-05T10:00:00Z")
    assert summary.step_into(sha("d"), [built, wheel], known, "built from the commit") is built
    assert summary.step_into(sha("d"), [built, wheel], known, "13.3.1 wheel") is wheel


def wheels(base, head):
    """A step's ``versions``: the cuda-bindings each side's workers reported."""
    return {"base": {"cuda-bindings": base}, "head": {"cuda-bindings": head}}


def test_the_time_per_call_of_a_changed_case_is_in_ns_on_the_pages_and_in_the_markdown():
    """A case at 1090 ns on the base, 1166.3 ns on the head reads "1.09 µs → 1.17 µs" wherever it is
    listed."""
    case = step_case(EVENT, 1.07, "regression", low=1.058, high=1.082, base_ns=1090.0,
                     head_ns=1166.3)
    assert '<span class="times">1.09 µs → 1.17 µs</span></td>' in pages_html.changed_table("gpu-a", [case])
    (row,) = report._case_rows([case])
    assert row.endswith("| 1.09 µs → 1.17 µs |")


def test_dates_are_in_utc_whatever_the_machines_time_zone(monkeypatch):
    """Main's head committed 2026-07-04 22:00 UTC and measured at 23:00 UTC reads so on the front
    page and in its Markdown on a machine five and a half hours ahead of UTC, where it is already
    the 5th."""
    known = {sha("m"): commit(date=1783202400000, position=1, title="x")}
    told = summary.landing("gpu-a", [run_of("m", started=1783206000000)], [], known)
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    try:
        for said in (landing_page.render_landing(told, [], known),
                     report.landing_markdown(told, [], known)):
            assert "2026-07-04 23:00 UTC" in said and "2026-07-05" not in said
    finally:
        monkeypatch.undo()
        time.tzset()


# --- ordering and tie-breaks -------------------------------------------------------------------
def test_a_commit_with_several_release_tags_is_named_by_the_highest_version():
    """Tags as git lists them (by name): v0.10.0 comes before v0.9.0, and the commit is
    cuda-core-v0.10.0."""
    info = commit(tags=["cuda-core-v0.10.0", "cuda-core-v0.9.0", "nightly", "cuda-core-v0.9.1rc1"])
    assert asv_files.release_name(info) == "cuda-core-v0.10.0"
    assert asv_files.commit_name(sha("r"), {sha("r"): info}) == "cuda-core-v0.10.0"
    two = commit(tags=["cuda-core-v0.3.2", "cuda-core-v0.3.10"])
    assert asv_files.release_name(two) == "cuda-core-v0.3.10"


def releases_out_of_order():
    """0.4.2, then 0.5.1, then 0.4.3 (a fix of the older series, tagged last), then main's m: the
    ladder's steps by version, and the newest release against main's head."""
    known = {sha("a"): commit(["cuda-core-v0.4.2"], 100),
             sha("c"): commit(["cuda-core-v0.5.1"], 200),
             sha("b"): commit(["cuda-core-v0.4.3"], 300),
             sha("m"): commit(date=400, position=7)}
    tags = {"a": "cuda-core-v0.4.2", "b": "cuda-core-v0.4.3", "c": "cuda-core-v0.5.1"}
    steps = [step("a", "b", release_tags=[tags["a"], tags["b"]]),
             step("b", "c", release_tags=[tags["b"], tags["c"]]), step("c", "m")]
    return known, steps, [run_of(n) for n in "acbm"]


def test_the_newest_release_is_the_highest_version_not_the_one_tagged_last():
    """0.4.3, tagged after 0.5.1, is not the newest release: the front page pairs main's head with
    0.5.1, and the Releases page lists the ladder newest version first."""
    known, steps, runs = releases_out_of_order()
    told = summary.landing("gpu-a", runs, steps, known)
    assert told["head"]["commit"] == sha("m")
    assert (told["release"]["commit"], told["release"]["name"]) == (sha("c"), "cuda-core-v0.5.1")
    assert told["release"]["step"]["base"] == sha("c")
    found = summary.releases(steps, known, sha("m"))
    assert found["newest"] == sha("c") and found["to_head"]["base"] == sha("c")
    assert [(d["base_name"], d["head_name"]) for d in found["ladder"]] == [
        ("cuda-core-v0.4.3", "cuda-core-v0.5.1"), ("cuda-core-v0.4.2", "cuda-core-v0.4.3")]


def test_mains_head_is_the_commit_furthest_along_main_even_when_merged_with_an_older_date():
    """m3, a merge whose commit date is older than m2's, is main's head: it is further along
    main."""
    known = {sha("1"): commit(date=100, position=1), sha("2"): commit(date=300, position=2),
             sha("3"): commit(date=200, position=3)}
    steps = [step("1", "2"), step("2", "3")]
    told = summary.landing("gpu-a", [run_of(n) for n in "123"], steps, known)
    assert told["head"]["commit"] == sha("3")
    assert (told["previous"]["commit"], told["previous"]["step"]["base"]) == (sha("2"), sha("2"))


def test_of_several_steps_into_mains_head_the_previous_is_the_one_from_the_newest_base():
    """m2 -> m3, then m1 -> m3 (made later, filling a gap): main's head m3 is read against m2, the
    previous measured commit."""
    known = {sha(n): commit(date=100 * int(n), position=int(n)) for n in "123"}
    newer = step("2", "3", step_case(EVENT, 1.05, "regression", low=1.04, high=1.06))
    older = step("1", "3", step_case(EVENT, 0.95, "improvement", low=0.94, high=0.96),
                 date="2026-12-05T12:00:00Z")
    told = summary.landing("gpu-a", [run_of(n) for n in "123"], [newer, older], known)
    assert told["previous"]["commit"] == sha("2") and told["previous"]["step"] is newer


def test_the_regressions_page_lists_the_newest_step_first_and_the_largest_ratio_first_within_one():
    """Flags of three steps: the newest step's first, within a step the largest ratio first; those
    another start did not reproduce after every open one, whatever their step's date."""
    first = step("1", "2", step_case(EVENT, 1.05, "regression"), date="2026-12-01T12:00:00Z")
    newest = step("2", "3", step_case(QUERY, 1.03, "regression"),
                  step_case(LAUNCH, 1.08, "regression"),
                  date="2026-12-03T12:00:00Z")
    cleared = step("3", "4", step_case(EVENT, 1.04, "not reproduced"), date="2026-12-04T12:00:00Z")
    found = summary.regressions([first, newest, cleared], {})
    assert [(s["head"], c["name"]) for s, c, _ in found] == [
        (sha("3"), LAUNCH), (sha("3"), QUERY), (sha("2"), EVENT), (sha("4"), EVENT)]


def test_a_steps_changed_cases_are_the_largest_slowdown_first_then_the_largest_speedup():
    found = summary.changed(step("1", "2", step_case(EVENT, 0.97, "improvement"),
                                 step_case(QUERY, 1.03, "regression"),
                                 step_case(LAUNCH, 0.90, "improvement"),
                                 step_case("bench_x.X.time_x('core')", 1.06, "regression"),
                                 step_case("bench_y.Y.time_y('core')", 0.95, "improvement")))
    assert [c["ratio"] for c in found] == [1.06, 1.03, 0.90, 0.95, 0.97]


def counts_record(bindings, python_calls, cuda=True):
    """A counts record of one commit in cuda-bindings ``bindings``: EventCreate('core') makes
    ``python_calls``."""
    case = {"name": EVENT, "calls": 1000, "cuda": {"cuEventCreate": 1} if cuda else None,
            "nvrtc": {},
            "python_calls": python_calls, "c_calls": 2, "net_blocks": 0, "unsteady": []}
    return {"commit": sha("m"), "versions": {"cuda-bindings": bindings, "python": "3.12.3"},
            "cases": [case],
            "cuda_counted": cuda, "cuda_why": "CUPTI's callback API" if cuda else "no CUPTI"}


def test_of_several_counts_records_of_a_commit_the_newest_count_of_a_case_wins():
    """A commit counted twice in one environment: the later count of a case is the one read; counted
    in 12.9.10, then in 13.3.1: without an environment asked for, the newest record's (13.3.1's) is
    read."""
    merged = summary.counted_at([counts_record("13.3.1", 6), counts_record("13.3.1", 7)])
    assert [c["python_calls"] for c in merged["cases"]] == [7]
    newest = summary.counted_at([counts_record("12.9.10", 5), counts_record("13.3.1", 7)])
    assert newest["versions"]["cuda-bindings"] == "13.3.1"
    assert newest["cases"][0]["python_calls"] == 7
    older = summary.counted_at([counts_record("12.9.10", 5), counts_record("13.3.1", 7)],
                               {"cuda-bindings": "12.9.10", "python": "3.12.3"})
    assert older["cases"][0]["python_calls"] == 5


# --- values at a threshold ---------------------------------------------------------------------
def test_a_verdict_needs_the_interval_strictly_beyond_the_threshold():
    """A 2 % threshold: an interval from exactly 1.02 up, or up to exactly 1 / 1.02, touches it: the
    same."""
    assert verdict(1.02, 1.05, 0.02) == "same"
    assert verdict(math.nextafter(1.02, 2), 1.05, 0.02) == "regression"
    assert verdict(0.95, 1 / 1.02, 0.02) == "same"
    assert verdict(0.95, math.nextafter(1 / 1.02, 0), 0.02) == "improvement"


def test_times_change_unit_exactly_at_1_us_and_1_ms():
    assert [fmt(s) for s in (999e-9, 1e-6, 999.99e-6, 1e-3)] == [
        "999 ns", "1.00 µs", "999.99 µs", "1.00 ms"]


def test_exactly_1_us_over_cpp_is_not_under_the_target():
    """cuda-python's target is under 1 µs over C++: 999.9 ns is under it (✓), exactly 1000 ns is not
    (✗), in the Markdown and on the front page's cell."""
    under, at = ({"over_cpp_ns": ns, "over_cpp_x": 2.0} for ns in (999.9, 1000.0))
    assert overcpp_read.over_text(under).endswith("✓") and overcpp_read.over_text(at).endswith("✗")
    for cell, mark in ((under, "over-ok"), (at, "over-target")):
        row = {"machine": "gpu-a", "benchmark": "bench_event.EventCreate.time_event_create",
               "case": [],
               "commit": sha("m"), "floor": None, "differs": "", "older": [], "build": "13.3.1 wheel",
               "cells": {"core": cell | {"value": 2e-6, "net": None, "step": None, "index": None}}}
        assert f'<td class="core {mark}"' in landing_page.render([row])


def test_one_over_cpp_run_shows_no_range_and_two_do():
    runs = {"low": 2.0, "high": 2.0, "runs": 1, "starts": 1}
    cell = {"over_cpp_ns": 100.0, "over_cpp_x": 2.0, "over_cpp": {"runs": runs}}
    assert overcpp_read.over_text(cell) == "+100 ns ×2.00 ✓"
    cell["over_cpp"]["runs"] = runs | {"high": 2.1, "runs": 2}
    assert overcpp_read.over_text(cell) == "+100 ns ×2.00 (×2.00–2.10 in 2 runs) ✓"


def test_a_run_exactly_at_the_fast_states_window_is_not_slow():
    assert not overcpp_read.in_slow_state(overcpp_read.SLOW_STATE)
    assert overcpp_read.in_slow_state(math.nextafter(overcpp_read.SLOW_STATE, 2))


def test_a_calibrated_threshold_at_the_floor_or_the_ceiling_is_taken_as_it_is(tmp_path, capsys):
    """1 % (the floor) and 50 % (the ceiling) are taken without a word; just below the floor is left
    out, just above the ceiling read as the ceiling."""
    below, above = math.nextafter(MIN_THRESHOLD, 0), math.nextafter(MAX_THRESHOLD, 1)
    (tmp_path / records.FILES["calibration"]).write_text(json.dumps(records.stamped(
        {"base": "a", "head": "a", "date": "d",
         "settings": {"layouts": "random", "confidence": 0.95, "cores": [1]},
         "thresholds": {"floor": MIN_THRESHOLD, "ceiling": MAX_THRESHOLD,
                        "below": below,
                        "above": above}}, "calibration")) + "\n")
    assert records.calibration(tmp_path) == {"floor": MIN_THRESHOLD,
                                             "ceiling": MAX_THRESHOLD,
                                             "above": MAX_THRESHOLD}
    said = capsys.readouterr().err
    assert "below's threshold" in said and "above's threshold" in said
    assert "floor's" not in said and "ceiling's" not in said


# --- upgrade and restore -----------------------------------------------------------------------
def test_upgrade_keeps_every_optional_field_a_schema_1_record_holds(tmp_path):
    """Schema-1 records that say everything: a step built from source with lost pairs, its
    environment, a release step's tags, a layout per process and the kernel's boot id; an over-C++
    run in the fast state naming its twins, each case's benchmark version and fast processes. The
    upgrade keeps every field as the record says it and takes the machine start from the boot id."""
    host = {"boot_id": "0f5e-boot-id", "boot": "2026-12-04T10:00:00Z"}
    old_step = step_record(bindings="source", env={"CUDA_BENCH_BINDINGS": "source"},
                           release_tags=["cuda-core-v0.4.2", "cuda-core-v0.5.1"],
                           lost={EVENT: "measured from 43 of 45 process pairs"}, host=host,
                           versions={side: {"cuda-bindings": "13.3.1"}
                                     for side in ("base", "head")},
                           cases=[step_case(EVENT, 1.03, "regression")])
    old_run = over_cpp_record(twins="twins 3", host=host, lost={EVENT: "1 process lost"},
                              settings={"layouts": "random", "state": "fast", "processes": 60,
                                        "confidence": 0.95},
                              cases=[over_cpp_case(EVENT, version="4", fast=40)])
    (tmp_path / records.FILES["step"]).write_text(json.dumps(old_step) + "\n")
    (tmp_path / records.FILES["over-cpp"]).write_text(json.dumps(old_run) + "\n")
    assert records.upgrade(tmp_path) == {records.FILES["step"]: 1, records.FILES["over-cpp"]: 1}
    start = host | {"start": "0f5e-boot-id"}
    (new_step,) = records.read(tmp_path, "step")
    assert new_step == records.stamped(old_step | {"host": start}, "step")
    (new_run,) = records.read(tmp_path, "over-cpp")
    assert new_run == records.stamped(old_run | {"host": start}, "over-cpp")


def test_a_rerun_puts_back_a_skipped_value_only_under_the_benchmarks_same_version():
    """A results file as asv writes it, run again: a case the second run skips gets its measured
    value back where the benchmark's version is the one it was measured under; where the benchmark
    changed since (another version), the old value measured other work and stays out."""
    path = next((SITE / "gpu-a").glob("0e5bc0a6-*.json"))
    old = json.loads(path.read_text())
    name = "bench_device.SetCurrent.time_set_current"
    measured = old["results"][name][0][0]
    again = copy.deepcopy(old)
    again["results"][name][0][0] = float("nan")
    assert asv_kept.keep_measured(old, again) == [f"{name}('core')"]
    assert again["results"][name][0][0] == measured
    changed = copy.deepcopy(old)
    changed["results"][name][0][0] = float("nan")
    changed["results"][name][2] = "another-version"
    assert asv_kept.keep_measured(old, changed) == []
    assert math.isnan(changed["results"][name][0][0])


# --- a published history: hostile text, two records of its head's step, a line unread ----------
HOSTILE_FLAG = "bench_event.EventCreate.time_event_create('<img src=y onerror=alert(6)>')"
HOSTILE_LOST = 'measured from 43 of 45 pairs: <i>lost</i> & "two"'
HOSTILE_VERDICT = "<script>alert(5)</script>"
RAW = ["<img src=y", "<i>lost</i>", "<script>alert(5)"]


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    """The site fixture's history, published with two more lines in its steps: main's head m3 -> m4
    measured again on another machine start, flagging a case whose name holds markup and losing
    pairs with a message that does; and a step record whose verdict is a script, which cannot be
    read. (html, results, exit status)"""
    spec = importlib.util.spec_from_file_location("site_fixture", SITE.parent / "make.py")
    made = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(made)
    shas = made.SHA
    tmp = tmp_path_factory.mktemp("edges")
    results_dir = tmp / "results"
    shutil.copytree(SITE, results_dir)
    again = step_record(base=shas["m3"], head=shas["m4"], date="2026-12-06T10:00:00Z",
                        command="cuda-bench steps", lost={HOSTILE_FLAG: HOSTILE_LOST},
                        host={"start": "boot-5", "boot": "2026-12-06T09:00:00Z"},
                        cases=[step_case(HOSTILE_FLAG, 1.08, "regression", low=1.06, high=1.10,
                                         base_ns=500.0, head_ns=540.0)])
    bad = step_record(cases=[step_case(EVENT, verdict=HOSTILE_VERDICT)])
    with open(results_dir / "gpu-a" / records.FILES["step"], "a") as f:
        f.write(json.dumps(records.check(records.stamped(again, "step"), "step")) + "\n")
        f.write(json.dumps(records.stamped(bad, "step")) + "\n")
    conf = asv_conf(tmp, tmp / "no-clone-here", sys.executable, results_dir=str(results_dir))
    proc = run_module("cuda_bench.publish", "--config", conf, check=False)
    return tmp / "html", results_dir, proc.returncode


def test_hostile_text_in_a_flagged_case_a_lost_message_and_an_unread_line_is_never_markup(edges):
    """The flagged case is on the front page, the Regressions page, the Steps page and in the feed;
    the lost pairs' message on the Steps page; why the bad line could not be read on every page:
    escaped everywhere, and in the feed's HTML too."""
    html, results_dir, status = edges
    assert status == 2  # the line that cannot be read
    pages = {p.name: p.read_text() for p in html.glob("*.html")}
    for name, page in pages.items():
        assert not [r for r in RAW if r in page], name
    for name in ("index.html", "releases.html", "regressions.html", "steps.html", "graph.html"):
        assert pages_html.esc(HOSTILE_VERDICT) in pages[name], name  # the banner names it, escaped
    for name in ("index.html", "regressions.html", "steps.html"):
        assert f'data-case="{pages_html.esc(HOSTILE_FLAG)}"' in pages[name], name
    assert pages_html.esc(HOSTILE_LOST) in pages["steps.html"]
    atom = {"a": "http://www.w3.org/2005/Atom"}
    entries = ET.parse(html / "regressions.xml").findall("a:entry", atom)
    contents = [e.find("a:content", atom).text for e in entries]
    (flagged,) = [c for c in contents if "alert(6)" in c]
    assert pages_html.esc(HOSTILE_FLAG) in flagged and "<img" not in flagged


def test_asvs_list_holds_medians_alone_and_regressions_json_the_paired_revisions(edges):
    """asv's Benchmark list: each case's median at the machine's newest commit, and no change (no
    value before, no commits of a change: asv's step detection on unpaired medians never shows);
    regressions.json names each open regression's step by its base's revision, then its head's."""
    html, results_dir, _ = edges
    head = asv_files.load_all(results_dir)[-1][1]
    medians = asv_files.values(head)
    rows = [row for path in (html / "graphs").rglob("summary.json")
            for row in json.loads(path.read_text())]
    assert len(rows) >= 3 and any(row["last_value"] is not None for row in rows)
    for row in rows:
        assert (row["prev_value"], row["change_rev"], row["last_err"]) == (None, None, None), row
        combo = split_case(row["pretty_name"])[1] if row["idx"] is not None else ()
        median = medians.get((row["name"], combo))
        assert row["last_value"] == (median if number(median) else None), row["name"]
    revisions = {commit: int(rev) for rev, commit in
                 json.loads((html / "index.json").read_text())["revision_to_hash"].items()}
    flagged = history.flagged_steps(history.steps(results_dir, "gpu-a"))
    listed = json.loads((html / "regressions.json").read_text())["regressions"]
    assert [(e[0], *e[6][0][:2]) for e in listed] == [
        (c["name"], revisions[s["base"]], revisions[s["head"]]) for s, c in flagged]
    assert len(listed) >= 3 and all(e[6][0][0] < e[6][0][1] for e in listed)



@pytest.mark.parametrize("text, status", [("[]", 2), ("garbage", 2), (None, 0)], ids=["a list", "garbage", "no file"])
def test_a_bad_or_missing_commits_json_leaves_commits_named_by_hash_and_releases_ordered_by_their_steps(
        tmp_path, capsys, text, status):
    """results/commits.json unreadable (not JSON, not an object) or missing: the report is made from the rest, the
    commits named by hash and the release steps still ordered by the tags their own records hold; what could not be
    read is named, and the command exits 2 (a file that is simply absent is no fault)."""
    import shutil

    from conftest import ROOT

    from cuda_bench import cli
    from cuda_bench.publish import read

    results_dir = tmp_path / "results"
    shutil.copytree(ROOT / "results", results_dir)
    if text is None:
        (results_dir / "commits.json").unlink()
    else:
        (results_dir / "commits.json").write_text(text)
    assert cli.main(["report", "--results", str(results_dir), "--releases"]) == status
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err
    assert ("commits.json" in err) == (status == 2)
    history = read.load(results_dir)
    ladder = history.machines["nvidia-h200"].releases["ladder"]
    heads = [d["step"]["release_tags"][1] for d in ladder]
    assert len(heads) == 5 and heads == sorted(heads, key=lambda t: tuple(map(int, t.rsplit("v", 1)[1].split("."))),
                                               reverse=True)
    if status == 2:  # no title or tag from commits.json: each commit is named by its hash
        assert all(d["head_name"] == d["head"][:9] for d in ladder)


def test_text_from_git_in_the_markdown_is_shown_as_it_is_never_as_markup(tmp_path, capsys):
    """A commit title and branch names carry Markdown and HTML: the report (docs/results.md, the nightly issue) and
    the pull-request comment show them as text. A title's tags, links and emphasis are escaped; a branch name with a
    backtick stays inside its code span."""
    import json
    import shutil

    from conftest import ROOT, paired_run

    from cuda_bench import cli
    from cuda_bench.compare import comment

    results_dir = tmp_path / "results"
    shutil.copytree(ROOT / "results", results_dir)
    known = json.loads((results_dir / "commits.json").read_text())
    head = "cb56ab9f9ae3b4a0ef19666697336945925589a5"
    known[head]["title"] = "<img src=x onerror=alert(1)> **bold** [a link](https://x.invalid) a|b"
    (results_dir / "commits.json").write_text(json.dumps(known))
    assert cli.main(["report", "--results", str(results_dir)]) == 0
    out = capsys.readouterr().out
    assert "<img" not in out and "&lt;img src=x onerror=alert(1)&gt;" in out
    assert "\\*\\*bold\\*\\* \\[a link\\](https://x.invalid) a\\|b" in out
    data = paired_run("aa") | {"base_rev": "main", "head_rev": "fix`<b>`it"}
    said = comment.comment(data)
    assert "``fix`<b>`it``" in said and "`main`" in said


# --- rules each stated by a test of its own -----------------------------------------------------------
def test_python_over_cpp_is_the_mean_of_a_groups_two_samples_over_its_twins():
    """stats.over_cpp: an ABBA group (c1, p1, p2, c2) holds two Python samples and two of the C++ twin; the
    difference per call is their means' (300 ns against 20 ns: +280 ns, not the sums' 560 ns)."""
    found = over_cpp_stats([[(20.0, 300.0, 300.0, 20.0)] * 5] * 10)
    assert (found["over_ns"], found["py_ns"], found["cpp_ns"], found["ratio"]) == (280.0, 300.0, 20.0, 15.0)


def over_cpp_stats(groups):
    from cuda_bench.foundations import stats

    return stats.over_cpp("bench_device.SetCurrent.time_set_current('core')", "set_current", groups)


def test_the_front_page_marks_main_open_with_only_unconfirmed_regressions():
    """The front page's "regressions still open on main" reads "open" while any regression is open on main,
    confirmed or not yet; "none" only when none is."""
    step = step_record(cases=[step_case(EVENT, 1.05, "regression") | {"confirmed": False}])
    told = {"head": {"name": "m4"}, "previous": None, "release": None, "release_open": 0,
            "open": [(step, step["cases"][0])]}
    row = "".join(landing_page.verdicts_html(told, {}))
    assert '<span class="label label-danger">open</span>' in row and "0 confirmed · 1 not yet confirmed" in row
    assert '<span class="label label-default">none</span>' in "".join(landing_page.verdicts_html(
        told | {"open": []}, {}))


def test_a_commits_date_is_recorded_in_ms_as_asv_dates_it(git_repo):
    """results/commits.json dates each commit in ms since the epoch, as asv does: the page's "committed" day is
    the day git itself gives the commit (not 1970)."""
    from conftest import git

    from cuda_bench.foundations.text import date_text
    from cuda_bench.run import asvrun

    head = git(git_repo, "rev-parse", "HEAD")
    (found, _) = asvrun.describe_commits(git_repo, [head])
    seconds = int(git(git_repo, "show", "-s", "--format=%ct", head))
    assert found[head]["date"] == seconds * 1000
    assert date_text(found[head]["date"])[:10] == time.strftime("%Y-%m-%d", time.gmtime(seconds)) > "2000"


def test_a_cuda_core_wheel_is_cached_per_cuda_bindings_it_was_built_against():
    """cuda_core compiles against cuda.bindings' declarations: its wheel built against 12.9.10 is never reused
    with 13.3.1, nor one built against one bindings tree with another; cuda_pathfinder's does not depend on it."""
    from cuda_bench.build.trees import cache_key

    keys = {b: cache_key("cuda_core", "tree", b) for b in ("cuda-bindings==12.9.10", "cuda-bindings==13.3.1",
                                                           "a" * 40, "b" * 40)}
    assert len(set(keys.values())) == 4
    assert keys["cuda-bindings==13.3.1"].endswith("-bindings13.3.1")
    assert cache_key("cuda_pathfinder", "tree", "cuda-bindings==12.9.10") == cache_key("cuda_pathfinder", "tree", "")


def test_a_steps_same_count_leaves_out_its_flags_not_reproduced():
    """A step's "K same" counts the cases judged the same, not those whose flag another start did not
    reproduce: those are counted apart."""
    step = step_record(cases=[step_case(EVENT, 1.0, "same"), step_case(QUERY, 1.0, "same"),
                              step_case(LAUNCH, 1.03, "not reproduced")])
    found = summary.counts(step)
    assert (found["same"], found["not reproduced"]) == (2, 1)
    assert summary.counts_words(found)[:4] == ["0 slower", "0 faster", "2 same", "1 not reproduced"]


def test_a_damaged_step_record_is_named_with_the_step_it_is_about(tmp_path):
    """The H200's v0.4.2 -> v0.5.1 step has a whole record and a 9-case recheck; with the whole record's line cut
    off halfway the step is rebuilt from the recheck: the banner names the line and the step it is about (its base
    can be read off the cut line), and the Releases page says above that step that a record of it could not be
    read, so its counts are not taken for the whole step's."""
    from cuda_bench.publish import read
    from cuda_bench.publish.pages import releases as releases_page

    root = Path(__file__).parent.parent / "results"
    for name in ("benchmarks.json", "commits.json"):
        shutil.copy(root / name, tmp_path / name)
    shutil.copytree(root / "nvidia-h200", tmp_path / "nvidia-h200")
    path = tmp_path / "nvidia-h200" / "steps.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    (number,) = [i for i, line in enumerate(lines, 1) if json.loads(line).get("release_tags") ==
                 ["cuda-core-v0.4.2", "cuda-core-v0.5.1"] and len(json.loads(line)["cases"]) > 50]
    lines[number - 1] = lines[number - 1][: len(lines[number - 1]) // 2] + b"\n"
    path.write_bytes(b"".join(lines))
    v042 = "3c307b40fc78dc0be07e7fb3724ad728a3971c27"  # cuda-core-v0.4.2
    found = read.load(tmp_path)
    (damaged,) = found.machines["nvidia-h200"].damaged
    assert damaged[1] == number and damaged[2] == {"base": v042}  # the head comes after the cases: cut off
    page = releases_page.document(found)
    assert f"steps.jsonl</code> line {number}: does not parse" in page
    assert "(a record of a step from cuda-core-v0.4.2: what the pages say of it rests on its other records)" in page
    section = page[page.index(f'data-base="{v042}"'):]
    section = section[:section.index("</section>")]
    assert f"A record of this step could not be read (steps.jsonl line {number})" in section


def test_a_chain_reached_against_a_steps_direction_divides_by_its_ratio():
    """Two steps into one head (a release's step and main's, A -> C and B -> C): from the first commit A, C is ×2
    and B, reached against its step's direction, ×2 / ×4 = ×0.5, its band divided the same way (the low end by
    the high one)."""
    a, b, c = sha("a"), sha("b"), sha("c")
    steps = [step_record(base=a, head=c, cases=[step_case(EVENT, 2.0)]),
             step_record(base=b, head=c, cases=[step_case(EVENT, 4.0)])]
    (chain,) = history.chains(steps, [a, b, c])[EVENT].values()
    assert chain[c][:3] == (2.0, 1.99, 2.01)
    value, low, high, root, count = chain[b]
    assert (value, root, count) == (0.5, a, 2)
    assert low == pytest.approx(1.99 / 4.01) and high == pytest.approx(2.01 / 3.99)


def test_the_front_page_takes_no_release_step_for_mains_step_into_the_head(tmp_path):
    """The fixture's head has two steps into it: main's (from the commit before, in the 13.3.1 wheel) and the
    newest release's (in the bindings each release asks for). Without main's step, the front page has no step
    into the head: the release's step never stands in for it."""
    from cuda_bench.publish import overview, read

    shutil.copytree(SITE, tmp_path / "results")
    path = tmp_path / "results" / "gpu-a" / "steps.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    head = read.load(tmp_path / "results").machines["gpu-a"].runs[-1]["commit_hash"]
    kept = [line for line in lines if json.loads(line)["head"] != head or json.loads(line)["bindings"] == "auto"]
    assert len(kept) < len(lines) and any(json.loads(line)["head"] == head for line in kept)
    path.write_text("".join(kept))
    found = read.load(tmp_path / "results")
    machine = found.machines["gpu-a"]
    at = overview.newest_of("gpu-a", machine.runs, machine.steps, found.known, [], None)
    assert at.into is None and at.into_cases == {}


def test_asvs_benchmark_list_keeps_no_change_that_asvs_step_detection_found(tmp_path):
    """asv's summary.json row of a case as asv writes it where its step detection saw a change (``change_rev``,
    ``prev_value``): the published row holds the head's median and no change."""
    from cuda_bench.publish import read
    from cuda_bench.publish.pages import asv_site

    run = read.load(SITE).machines["gpu-a"].runs[-1]
    head = run["commit_hash"]
    path = tmp_path / "graphs" / "machine-gpu-a" / "summary.json"
    path.parent.mkdir(parents=True)
    row = {"name": EVENT.split("(")[0], "pretty_name": EVENT, "idx": 0, "last_rev": 3, "last_value": 1e-6,
           "last_err": 1e-8, "prev_value": 5e-7, "change_rev": [2, 3]}
    path.write_text(json.dumps([row]))
    asv_site.median_summaries(tmp_path, [("gpu-a", run)], {head: 4})
    (published,) = json.loads(path.read_text())
    assert published["change_rev"] is None and published["prev_value"] is None and published["last_err"] is None
    assert published["last_rev"] == 4 and published["last_value"] == asv_files.values(run)[
        (EVENT.split("(")[0], split_case(EVENT)[1])]
