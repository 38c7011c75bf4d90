"""The published dashboard in a real browser (Debian's chromium, driven by Playwright), on a history with known
answers: tests/fixtures/site (``make.py`` there says what it holds): a confirmed regression, one not yet
confirmed, one another machine start did not reproduce, a release step with an improvement, a clean head whose
asv median doubles without any paired step saying so, the newest release against main's head, and the
cuda-bindings environment changing between the releases and main.

Every badge, list entry, Regressions row, feed item and chain point is checked against the paired records; every
release is named by its tag; one line per library runs across the environment change. Without chromium the
browser tests skip, saying why; with ``CUDA_BENCH_REQUIRE_BROWSER=1`` (``.ci/run`` sets it) they fail instead.
``CUDA_BENCH_SCREENSHOTS=DIR`` also publishes the committed H200 history and writes the pages' screenshots there.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import math
import os
import re
import shutil
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ROOT, asv_conf, run_asv, run_module

from cuda_bench.foundations import calls, counts, stats, text
from cuda_bench.foundations.text import fmt, per_call
from cuda_bench.publish import read, report, summary
from cuda_bench.publish.pages import graph as graph_page
from cuda_bench.publish.pages import html as pages_html
from cuda_bench.publish.pages import landing as landing_page
from cuda_bench.publish.pages import regressions as regressions_page
from cuda_bench.publish.pages import releases as releases_page
from cuda_bench.results import asv_files, counts_read, history

#: asv publish and a real browser: the full suite's lane
pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).parent / "fixtures" / "site"
_spec = importlib.util.spec_from_file_location("site_fixture", FIXTURE / "make.py")
known_answers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(known_answers)
SHA, MACHINE = known_answers.SHA, known_answers.MACHINE
HOSTILE, HOSTILE_TAG = known_answers.HOSTILE, known_answers.HOSTILE_TAG
HOSTILE_CASE, HOSTILE_ERROR = known_answers.HOSTILE_CASE, known_answers.HOSTILE_ERROR
SET_CORE, SET_BINDINGS = known_answers.SET_CORE, known_answers.SET_BINDINGS
EVENT_CORE, LAUNCH_16 = known_answers.EVENT_CORE, known_answers.LAUNCH_16
LAUNCH_16_BINDINGS, PATHFINDER = known_answers.LAUNCH_16_BINDINGS, known_answers.PATHFINDER
COMMITS = known_answers.COMMITS
DEVICE_ARCH = known_answers.DEVICE_ARCH
TAGS = {"v010": "cuda-core-v0.1.0", "v020": "cuda-core-v0.2.0"}

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def find_chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def browser_or_why():
    """(chromium's path, None), or (None, why the browser tests cannot run)."""
    chromium = find_chromium()
    if chromium is None:
        return None, "no chromium on this machine (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401  (requirements: the test extra)
    except ImportError:
        return None, "chromium is here but Playwright is not (pip install -e '.[test]')"
    return chromium, None


def need_browser():
    """Chromium's path; where there is none, a skip that says why, or a failure with CUDA_BENCH_REQUIRE_BROWSER=1."""
    chromium, why = browser_or_why()
    if chromium is None:
        if os.environ.get("CUDA_BENCH_REQUIRE_BROWSER") == "1":
            pytest.fail(f"CUDA_BENCH_REQUIRE_BROWSER=1 and {why}: the dashboard tests need chromium", pytrace=False)
        pytest.skip(why)
    return chromium


def test_a_missing_browser_fails_when_one_is_required(monkeypatch):
    """Without chromium the browser tests skip, saying so; with CUDA_BENCH_REQUIRE_BROWSER=1 (CI) they fail and name
    chromium."""
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("CUDA_BENCH_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        need_browser()
    monkeypatch.setenv("CUDA_BENCH_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="chromium"):
        need_browser()
    assert "CUDA_BENCH_REQUIRE_BROWSER=1" in (ROOT / ".ci" / "run").read_text()


def test_the_browser_writes_into_the_tests_own_home_not_yours(site):
    """HOME, the XDG folders and npm's cache point into the tests' own home (``conftest.TEST_HOME``): chromium and
    Playwright, which make ``~/.config`` and ``~/.cache`` on a fresh machine, leave the home the tests were started
    with (``conftest.REAL_HOME``) as it was."""
    from conftest import REAL_HOME, TEST_HOME

    assert Path.home() == TEST_HOME != REAL_HOME and Path(os.environ["HOME"]) == TEST_HOME
    for key in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "npm_config_cache"):
        assert Path(os.environ[key]).is_relative_to(TEST_HOME), key
    before = sorted(p.name for p in REAL_HOME.iterdir())
    for tab in browser_tab(site[2]):
        tab.goto(f"{site[2]}/index.html")
    assert sorted(p.name for p in REAL_HOME.iterdir()) == before


# --- the fixture history, published ---------------------------------------------------------------------
def serve(folder):
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def publish_history(tmp, source, **overrides):
    """``source`` (a results folder) copied into ``tmp`` and published by ``cuda_bench.publish.dashboard`` with a
    repository that does not exist: results/ alone must do."""
    results_dir = tmp / "results"
    shutil.copytree(source, results_dir)
    conf = asv_conf(tmp, tmp / "no-clone-here", sys.executable, results_dir=str(results_dir), **overrides)
    run_module("cuda_bench.publish", "--config", conf)
    return conf, results_dir, tmp / "html"


def served(tmp, source):
    """``source`` published into ``tmp`` (:func:`publish_history`) and served, for a module's tests: yields (html,
    results_dir, origin), then stops the server."""
    conf, results_dir, html = publish_history(tmp, source)
    server, origin = serve(html)
    yield html, results_dir, origin
    server.shutdown()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    yield from served(tmp_path_factory.mktemp("site"), FIXTURE / "results")


@pytest.fixture(scope="module")
def steps(site):
    return history.steps(site[1], MACHINE)


@pytest.fixture(scope="module")
def known(site):
    return asv_files.commits(site[1])


@pytest.fixture
def page(site):
    yield from browser_tab(site[2])


@pytest.fixture
def broken_page(broken):
    yield from browser_tab(broken[3])


def browser_tab(origin):
    """A chromium tab on the site served at ``origin``; when the test ends, no console error and no request outside
    that site."""
    chromium = need_browser()
    import playwright.sync_api as playwright

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        tab.problems, tab.outside, tab.dialogs = [], [], []
        tab.on("console", lambda m: m.type == "error" and tab.problems.append(m.text))
        tab.on("pageerror", lambda e: tab.problems.append(str(e)))
        tab.on("request", lambda r: r.url.startswith(origin) or tab.outside.append(r.url))
        tab.on("dialog", lambda d: (tab.dialogs.append(d.message), d.dismiss()))  # an injected alert() ran
        tab.origin = origin
        yield tab
        browser.close()
    assert tab.problems == [], f"console errors: {tab.problems}"
    assert tab.outside == [], f"requests outside html/: {tab.outside}"
    assert tab.dialogs == [], f"a script the pages did not write ran: {tab.dialogs}"


def step_of(steps, base, head):
    return next(s for s in steps if s["base"] == SHA[base] and s["head"] == SHA[head])


def case_of(step, name):
    return next(c for c in step["cases"] if c["name"] == name)


def changed_in(step):
    """{case: verdict} of what a step judged slower or faster (controls never count)."""
    return {c["name"]: c["verdict"] for c in step["cases"]
            if c["verdict"] in ("regression", "improvement") and not c.get("control")}


def test_the_fixture_holds_the_known_answers(steps):
    """The records say what make.py says they say: the answers every page below is checked against."""
    assert changed_in(step_of(steps, "v010", "v020")) == {SET_CORE: "improvement"}
    event = case_of(step_of(steps, "m1", "m2"), EVENT_CORE)
    assert (event["verdict"], event["confirmed"]) == ("regression", True)
    launch = case_of(step_of(steps, "m2", "m3"), LAUNCH_16)
    assert (launch["verdict"], launch["confirmed"]) == ("regression", False)
    assert case_of(step_of(steps, "m2", "m3"), SET_BINDINGS)["verdict"] == "not reproduced"
    assert changed_in(step_of(steps, "m3", "m4")) == {}
    assert changed_in(step_of(steps, "v020", "m4")) == {EVENT_CORE: "regression", LAUNCH_16: "regression",
                                                        LAUNCH_16_BINDINGS: "regression"}
    assert [c["name"] for c in summary.put_down(step_of(steps, "v020", "m4"))][:1] == [LAUNCH_16_BINDINGS]


# --- the front page -------------------------------------------------------------------------------------
def test_the_front_page_answers_is_main_fine_from_the_paired_records(site, steps, known, page):
    """Main's head, its verdict against the previous measured commit and against the newest release (each a paired
    step: counts and every changed case with its ratio and interval), the open regressions with their status: all
    as the records hold them; a badge on an operation only where the step to the head judged it."""
    html, results_dir, origin = site
    page.goto(f"{origin}/index.html")
    assert page.get_attribute("p.head", "data-commit") == SHA["m4"]
    assert f"“{HOSTILE}”" in page.inner_text("p.head")  # its title, as written
    rows = page.eval_on_selector_all("table.verdicts tr", "trs => trs.map(tr => [tr.dataset.against, "
                                     "tr.dataset.base || '', tr.dataset.head || '', tr.innerText])")
    by = {r[0]: r for r in rows}
    previous, release = step_of(steps, "m3", "m4"), step_of(steps, "v020", "m4")
    for key, step in (("previous", previous), ("release", release)):
        assert by[key][1:3] == [step["base"], step["head"]]
        count = summary.counts(step)
        assert f'{count["regression"]} slower · {count["improvement"]} faster · {count["same"]} same' in by[key][3]
    assert "cuda-core-v0.2.0 (the newest release)" in by["release"][3] and "2 slower" in by["release"][3]
    assert "no change" in by["previous"][3]
    shown = page.eval_on_selector_all(
        "h3.changed[data-against='release'] + table tr.case",
        "trs => trs.map(tr => [tr.dataset.case, +tr.dataset.ratio, +tr.dataset.low, +tr.dataset.high, "
        "tr.dataset.status])")
    assert shown == [[c["name"], c["ratio"], c["low"], c["high"], summary.status(c)]
                     for c in summary.changed(release)]
    assert [s[0] for s in shown] == [EVENT_CORE, LAUNCH_16]  # slower first, the largest first
    assert page.locator("h3.changed[data-against='previous']").count() == 0  # the head changed nothing
    opened = page.eval_on_selector_all("ul.open li", "lis => lis.map(li => [li.dataset.case, li.dataset.head, "
                                       "li.innerText])")
    flagged = history.flagged_steps([s for s in steps if summary.step_kind(s, known) == "main"])
    assert [o[:2] for o in opened] == [[c["name"], s["head"]] for s, c in flagged]
    assert [o[2].rsplit(": ", 1)[1] for o in opened] == ["not yet confirmed", "confirmed"]
    assert "1 confirmed · 1 not yet confirmed" in by["open"][3]
    # the badges: exactly what the step to the head judged (nothing), whatever asv's medians did
    badges = page.eval_on_selector_all("table.overview td[data-verdict]:not([data-verdict=''])",
                                       "tds => tds.map(td => td.dataset.verdict)")
    assert badges == [] == list(changed_in(previous))
    cell = page.locator("tr[data-benchmark='bench_device.SetCurrent.time_set_current'] td.core")
    assert cell.inner_text().strip() == "asv 620 ns"  # asv's median doubled (310 -> 620 ns): one number, no badge
    assert "×1.004 [0.996, 1.012]" in cell.get_attribute("title")  # the paired step, on hover
    body = page.inner_text("body")
    assert body.count(counts.UNSEEN) == 1  # what the counts cannot see, said once, under the work lines
    words = len(body.split())
    # with the calls each operation and case is also named by, both builds named, and the first screen's answers
    assert words < 640, words
    shoot(page, "landing-fixture.png")


def test_a_badge_marks_exactly_the_cases_the_step_to_the_head_judged(site, steps, known):
    """Where the step to the head flags cases, the operations table badges those, slower or faster, and no other."""
    html, results_dir, origin = site
    runs = [(m, d) for m, d in asv_files.load_all(results_dir) if d["commit_hash"] != SHA["m4"]]  # m3 is the head
    from cuda_bench.publish import overview

    names = {n: b.get("param_names", []) for n, b in asv_files.suite(results_dir).items()}
    rows = overview.overview_rows(runs, {MACHINE: steps}, known, names)
    page_html = landing_page.render(rows)
    marked = re.findall(r'<tr data-benchmark="([^"]+)" data-case="([^"]*)">|<td class="(\w+)[^"]*" data-value="[^"]*"'
                        r'(?: data-(?:net|one-process|name)="[^"]*")* data-verdict="(\w+)"', page_html)
    found, current = set(), None
    for benchmark, case, api, verdict in marked:
        if benchmark:
            current = (benchmark, case)
        elif verdict:
            found.add((current[0], current[1], api, verdict))
    from cuda_bench.foundations.names import split_case

    expected = set()
    for name, verdict in changed_in(step_of(steps, "m2", "m3")).items():
        benchmark, combo = split_case(name)
        expected.add((benchmark, " ".join(c.strip("'") for c in combo[1:]), combo[0].strip("'"), verdict))
    assert found == expected == {("bench_launch.Launch.time_launch", "16 ptr", "core", "regression")}


def test_the_newest_release_to_mains_head_is_said_missing_where_the_history_lacks_it(site, tmp_path):
    """Without a paired step from the newest release to main's head, the front page and the Releases page say
    plainly that it was not measured and which command measures it; no number stands in for it."""
    html, results_dir, origin = site
    copy = tmp_path / "results"
    shutil.copytree(results_dir, copy)
    records = [json.loads(line) for line in (copy / MACHINE / "steps.jsonl").read_text().splitlines()]
    (copy / MACHINE / "steps.jsonl").write_text("".join(
        json.dumps(r) + "\n" for r in records if (r["base"], r["head"]) != (SHA["v020"], SHA["m4"])))
    known = asv_files.commits(copy)
    steps = history.steps(copy, MACHINE)
    told = summary.landing(MACHINE, [d for _, d in asv_files.load_all(copy)], steps, known)
    assert told["release"]["commit"] == SHA["v020"] and told["release"]["step"] is None
    text = landing_page.render_landing(told, [], known)
    assert 'data-against="release" class="missing"' in text and "not measured yet" in text
    assert "cuda-bench ladder" in text and "2 slower" not in text
    found = summary.releases(steps, known, SHA["m4"])
    assert found["to_head"] is None and found["newest"] == SHA["v020"]
    text = releases_page.render_releases(MACHINE, found, known)
    assert "release-step missing" in text and "Not measured yet" in text and "cuda-core-v0.2.0" in text


# --- releases -------------------------------------------------------------------------------------------
def test_the_releases_page_pairs_each_release_with_the_one_before(site, steps, page):
    """Each release step by name, its changed cases slower first with ratio, interval and status, and a geometric
    mean per library of the step's ratios; then the newest release against main's head."""
    html, results_dir, origin = site
    page.goto(f"{origin}/releases.html")
    sections = page.eval_on_selector_all("section.release-step", "ss => ss.map(s => [s.dataset.base, s.dataset.head, "
                                         "s.querySelector('h3').innerText])")
    assert sections == [[SHA["v020"], SHA["m4"], "cuda-core-v0.2.0 → 0e5bc0a68 2 slower"],
                        [SHA["v010"], SHA["v020"], "cuda-core-v0.1.0 → cuda-core-v0.2.0 1 faster"]]
    step = step_of(steps, "v010", "v020")
    rows = page.eval_on_selector_all(
        f"section.release-step[data-head='{SHA['v020']}'] tr.case",
        "trs => trs.map(tr => [tr.dataset.case, +tr.dataset.ratio, +tr.dataset.low, +tr.dataset.high, "
        "tr.dataset.status])")
    assert rows == [[SET_CORE, 0.8, 0.79, 0.81, "improvement"]]
    means = page.eval_on_selector_all(f"section.release-step[data-head='{SHA['v020']}'] .gm",
                                      "ss => ss.map(s => [s.dataset.api, +s.dataset.value, +s.dataset.cases])")
    for api, value, count in means:
        ratios = [c["ratio"] for c in step["cases"] if f"('{api}'" in c["name"]]
        assert count == len(ratios) and value == pytest.approx(math.exp(sum(map(math.log, ratios)) / len(ratios)))
    assert [m[0] for m in means] == ["core", "bindings", "cupy"]
    shoot(page, "releases-fixture.png")


def test_a_release_step_across_a_bindings_change_puts_its_bindings_rows_down_to_it(site, page):
    """v0.2.0 → main's head runs cuda-bindings 12.9.10 on one side and 13.3.1 on the other. A cuda.bindings case
    slower across it (Launch('bindings', '16 ptr') ×1.300) is the wheel's doing: the Releases page names the change in
    the step's headline and lists the case under it, apart; neither the step's count nor main's open regressions
    count it as the release's; the Regressions page lists it in a table of its own, put down to the change; the
    Graphs page marks it ◆, put down to the change, with a line where the cuda-bindings changes and none where it
    does not."""
    html, results_dir, origin = site
    page.goto(f"{origin}/releases.html")
    section = f"section.release-step[data-base='{SHA['v020']}'][data-head='{SHA['m4']}']"
    headline = page.inner_text(f"{section} p.environment")
    assert "cuda-bindings 12.9.10 → 13.3.1" in headline
    assert page.inner_text(f"{section} h3").endswith("2 slower")  # the release's own two
    apart = page.eval_on_selector_all(f"{section} table.put-down tr.case", "trs => trs.map(tr => "
                                      "[tr.dataset.case, +tr.dataset.ratio, tr.dataset.verdict])")
    assert apart == [[LAUNCH_16_BINDINGS, 1.3, "regression"]]
    release = page.eval_on_selector_all(f"{section} table.changed tr.case", "trs => trs.map(tr => tr.dataset.case)")
    assert LAUNCH_16_BINDINGS not in release and len(release) == 2
    assert "1 changed with cuda-bindings 12.9.10 → 13.3.1" in page.inner_text(section)
    page.goto(f"{origin}/regressions.html")
    flagged = page.eval_on_selector_all("tr[data-case]", "trs => trs.map(tr => [tr.closest('table').dataset.table, "
                                        "tr.dataset.case, tr.dataset.head, tr.children[3].innerText])")
    assert ["open", EVENT_CORE, SHA["m4"]] in [f[:3] for f in flagged]
    assert [f for f in flagged if f[1] == LAUNCH_16_BINDINGS] == [
        ["put down", LAUNCH_16_BINDINGS, SHA["m4"], "cuda-bindings 12.9.10 → 13.3.1"]]
    page.goto(f"{origin}/index.html")
    assert "2 slower" in page.inner_text("table.verdicts tr[data-against='release']")
    page.goto(f"{origin}/graph.html#machine={MACHINE}&benchmark=bench_launch.Launch.time_launch&case=16%20ptr")
    page.wait_for_function("() => window.cudaBenchGraph && window.cudaBenchGraph.ready")
    marks = page.evaluate("""() => cudaBenchGraph.chain.getData().filter(s => s.cb.kind === 'flag')
        .map(s => [s.cb.api, s.cb.verdict, s.data.map(p => p[0])])""")
    at = list(COMMITS).index("m4")
    assert ["bindings", "put down", [at]] in marks and ["bindings", "regression", [at]] not in marks
    lines = page.eval_on_selector_all("#chain .env-mark", "ds => ds.map(d => d.innerText)")
    # the wheels as their workers reported them ("auto" is no version), and m3's own build of cuda_bindings
    assert lines == ["cuda-bindings 12.9.10 wheel → 13.3.1 wheel", "cuda-bindings 13.3.1 wheel → built from the commit",
                     "cuda-bindings built from the commit → 13.3.1 wheel"]
    tip = graph_tip(page, "bindings", at)
    assert "put down to cuda-bindings 12.9.10 → 13.3.1" in tip and "cuda.bindings, cuda-bindings 13.3.1 wheel" in tip


def graph_tip(page, api, x):
    """What the graph page says on hover over ``api``'s flag at commit ``x`` of the chain plot."""
    where = page.evaluate("""([api, x]) => {
        const plot = cudaBenchGraph.chain;
        const flags = plot.getData().filter(s => s.cb.kind === 'flag' && s.cb.api === api);
        const p = flags.flatMap(s => s.data).filter(p => p[0] === x)[0];
        const o = plot.pointOffset({x: p[0], y: p[1]}), box = $('#chain').offset();
        return [box.left + o.left - window.scrollX, box.top + o.top - window.scrollY]; }""", [api, x])
    page.mouse.move(*where)
    page.wait_for_selector("#graph-tip", state="visible")
    return page.inner_text("#graph-tip")


# --- the work per call, counted --------------------------------------------------------------------------
def test_each_step_says_what_changed_in_the_work_per_call_as_the_counts_records_hold(site, page):
    """Where both commits of a step were counted, the pages list each case whose work per call changed (exactly
    what ``counts_read.diff`` of the two records says) or say that none did; where one was not, they say nothing."""
    html, results_dir, origin = site
    work = history.work(results_dir, MACHINE)
    assert sorted(work) == sorted({SHA[c] for c, _, _ in known_answers.COUNTED})

    def shown(selector):
        return page.eval_on_selector_all(f"{selector} .work li",
                                         "lis => lis.map(li => [li.dataset.case, li.innerText])")

    def expected(base, head):  # each side as counted in its cuda-bindings of the step (make.py's BINDINGS)

        def counted(commit):
            bindings = known_answers.BINDINGS.get(commit, "13.3.1")
            return next(r for r in reversed(work[SHA[commit]]) if r["versions"]["cuda-bindings"] == bindings)

        found = counts_read.diff(counted(base), counted(head))
        return [[name, text.replace("`", "")] for name, text in found.items()]

    page.goto(f"{origin}/releases.html")
    assert shown(f"section.release-step[data-head='{SHA['v020']}']") == expected("v010", "v020") == [
        [SET_CORE, "SetCurrent('core'): -1 cuCtxGetCurrent, -9 Python calls"]]
    assert shown(f"section.release-step[data-head='{SHA['m4']}']") == expected("v020", "m4") == [
        [EVENT_CORE, "EventCreate('core'): +1 cuCtxGetCurrent, +14 Python calls"]]
    page.goto(f"{origin}/index.html")
    same = page.inner_text("[data-against='previous'] .work[data-changed='0']")  # m3 -> m4: counted, unchanged
    cases = len(work[SHA["m4"]][-1]["cases"])
    assert expected("m3", "m4") == []
    assert same == f"Work per call since the previous measured commit: the same in all {cases} cases counted at " \
                   "both commits."
    assert shown("section.machine") == expected("v020", "m4")  # against the newest release
    # each case's work per call beside its time, at main's head: on hover, as the cell's other figures
    title = page.get_attribute(f"tr[data-benchmark='{EVENT_CORE.split('(')[0]}'] td.core", "title")
    event = next(c for c in work[SHA["m4"]][-1]["cases"] if c["name"] == EVENT_CORE)
    assert f"Work per call, counted at {SHA['m4'][:9]}: CUDA cuCtxGetCurrent 1, cuEventCreate 1, " \
           f"cuEventDestroy_v2 1; {event['python_calls']} Python calls" in title and event["python_calls"] == 20
    page.goto(f"{origin}/steps.html")
    rows = page.eval_on_selector_all("tr.work", "trs => trs.map(tr => [tr.dataset.case, tr.innerText])")
    assert sorted(rows) == sorted([name, f"{name} {', '.join(calls.of(name))}\twork per call: "
                                         f"{text.split(': ', 1)[1]}"]
                                  for name, text in expected("v010", "v020") + expected("v020", "m4"))
    text = report.releases_markdown(MACHINE, summary.releases(history.steps(results_dir, MACHINE),
                                                              asv_files.commits(results_dir), SHA["m4"], work),
                                    asv_files.commits(results_dir))
    assert "- `SetCurrent('core')`: -1 cuCtxGetCurrent, -9 Python calls" in text
    assert "- `EventCreate('core')`: +1 cuCtxGetCurrent, +14 Python calls" in text
    told = summary.landing(MACHINE, [d for m, d in asv_files.load_all(results_dir) if m == MACHINE],
                           history.steps(results_dir, MACHINE), asv_files.commits(results_dir), work)
    front = report.landing_markdown(told, [], asv_files.commits(results_dir))
    assert f"Work per call since the previous measured commit: the same in all {cases} cases counted" in front
    assert "- `EventCreate('core')`: +1 cuCtxGetCurrent, +14 Python calls" in front  # since the newest release


def test_a_step_whose_commits_were_not_both_counted_says_nothing_of_their_work(site, page):
    """m1 -> m2 (neither commit counted) and m2 -> m3 (only m3): the step is described without any work (None),
    not as unchanged, and the Steps page lists no work for it."""
    html, results_dir, origin = site
    steps, known = history.steps(results_dir, MACHINE), asv_files.commits(results_dir)
    work = history.work(results_dir, MACHINE)
    for base, head in (("m1", "m2"), ("m2", "m3")):
        assert summary.described(step_of(steps, base, head), known, work)["work"] is None
        assert pages_html.work_html(summary.described(step_of(steps, base, head), known, work)) == ""
    assert summary.described(step_of(steps, "m3", "m4"), known, work)["work"]["changed"] == {}


# --- asv's own pages, fed by the paired steps -------------------------------------------------------------
def test_asvs_benchmark_list_shows_medians_alone_never_asvs_step_detection(site, steps, page):
    """asv's Benchmark list: each case's median at main's head and nothing in the change
    columns, for SetCurrent('core'), whose median doubles at the head with no paired step saying
    so, nor for any case; what changed, each with its interval, is what the project's pages say
    (the front page's cells link each case to graph.html)."""
    html, results_dir, origin = site
    page.goto(f"{origin}/asv.html#summarylist")
    page.wait_for_selector("#summarylist-body table tbody tr", timeout=20000)
    rows = page.eval_on_selector_all(
        "#summarylist-body table tbody tr",
        "trs => trs.map(tr => [tr.querySelector('td').innerText.replace(/\\s+/g, ''), "
        "tr.querySelector('td.value').innerText.trim(), "
        "tr.querySelector('td.change').innerText.trim(), tr.querySelector('td.change').className, "
        "tr.querySelector('td.change-date').innerText.trim()])")
    assert len(rows) > 10
    assert [r for r in rows if r[2] or r[3] != "change" or r[4]] == []  # no change, no commits
    shown = {name: value for name, value, *_ in rows}
    assert shown[SET_CORE.replace(" ", "")] == "620.000ns"  # the head's median (310 -> 620 ns)
    assert not any(SET_CORE in changed_in(step) for step in steps if step["head"] == SHA["m4"])
    page.goto(f"{origin}/index.html")
    cell = page.locator("tr[data-benchmark='bench_device.SetCurrent.time_set_current'] td.core a")
    assert cell.get_attribute("href").startswith("graph.html#machine=")
    shoot(page, "summarylist-fixture.png")


#: asv's graph display has drawn its plot
ASV_GRAPH_DRAWN = ("() => !!($('#main-graph').data('plot') "
                   "&& $('#main-graph').data('plot').getData().length)")


def test_a_commit_measured_in_two_builds_is_one_build_on_every_graph_and_page(site, page):
    """m3 is measured with the 13.3.1 wheel and later with cuda_bindings built from m3 (medians a quarter higher):
    asv's graph, asv's Benchmark list's source, the graph page and the operations table at m3 show the from-source
    build's medians, never the mean of the two (``asv_files.one_per_commit``)."""
    html, results_dir, origin = site
    key = ("bench_device.SetCurrent.time_set_current", ("'core'",))
    (scale,) = [scale for commit, _, scale, _ in known_answers.BUILDS if commit == "m3"]
    own = known_answers.MEDIANS[key][4] * scale * 1e-9
    mean = known_answers.MEDIANS[key][4] * (1 + scale) / 2 * 1e-9
    (graph,) = [p for p in (html / "graphs").rglob(f"{key[0]}.json") if "summary" not in p.parts]
    core = [point[1][0] for point in json.loads(graph.read_text())]  # asv's graph: [revision, [core, ...]]
    assert len(core) == len(COMMITS) and own in [pytest.approx(v) for v in core]
    assert not any(v == pytest.approx(mean) for v in core)
    page.goto(f"{origin}/graph.html#machine={MACHINE}&benchmark={key[0]}")
    page.wait_for_function("() => window.cudaBenchGraph && window.cudaBenchGraph.ready")
    drawn = page.evaluate("() => cudaBenchGraph.medians.getData().filter(s => s.cb.api === 'core')[0].data")
    assert drawn[4][1] == pytest.approx(own)
    assert page.inner_text(f"#graph-commits tr[data-commit='{SHA['m3']}']").endswith("built from the commit")
    found = read.load(results_dir)
    at_m3 = found.rows_at(SHA["m3"][:9])
    (row,) = [r for r in at_m3 if r["benchmark"] == key[0]]
    assert row["cells"]["core"]["value"] == pytest.approx(own) and row["build"] == "built from the commit"


def test_pathfinder_is_drawn_on_the_front_page_and_in_its_graphs(site, page):
    """cuda.pathfinder's lookups, which have no other library's forms: a table of their own on the front page with
    main's head's medians, and a line of their own, chain and medians, on the graph page."""
    html, results_dir, origin = site
    page.goto(f"{origin}/index.html")
    cells = page.eval_on_selector_all(f"tr[data-benchmark='{PATHFINDER}'] td.pathfinder",
                                      "tds => tds.map(td => [td.closest('tr').dataset.case, +td.dataset.value])")
    assert sorted(cells) == [[r, pytest.approx(known_answers.MEDIANS[(PATHFINDER, ("'pathfinder'", f"'{r}'"))][5]
                                               * 1e-9)] for r in ("1", "3")]
    page.goto(f"{origin}/graph.html#machine={MACHINE}&benchmark={PATHFINDER}&case=3")
    page.wait_for_function("() => window.cudaBenchGraph && window.cudaBenchGraph.ready")
    kinds = page.evaluate("""() => [...cudaBenchGraph.chain.getData(), ...cudaBenchGraph.medians.getData()]
        .filter(s => s.cb.api === 'pathfinder').map(s => [s.cb.kind, s.data.length])""")
    assert ["median", len(COMMITS)] in kinds and any(kind == "chain" for kind, _ in kinds)
    assert "cuda.pathfinder" in page.inner_text("#graph-legend")
    assert "No paired step measured this case yet" not in page.inner_text("#graph-notes")


def test_asvs_graph_draws_one_line_per_library_across_the_environment_change(site, page):
    """asv's own graph of SetCurrent, as asv draws it from what the project's plugin gives asv
    publish: three lines (core, bindings, CuPy), every one through all six commits although the
    releases were measured with cuda-bindings auto and main with 13.3.1; no environment in their
    names; the release tags drawn by name."""
    html, results_dir, origin = site
    page.goto(f"{origin}/asv.html#bench_device.SetCurrent.time_set_current?machine={MACHINE}")
    page.wait_for_function(ASV_GRAPH_DRAWN, timeout=20000)
    series = page.evaluate("""() => $('#main-graph').data('plot').getData().map(s => [s.label,
        s.data.filter(p => p[1] !== null).length, s.data.length])""")
    assert sorted(s[0] for s in series) == ["api-bindings", "api-core", "api-cupy"]
    assert all(s[1] == s[2] == 6 for s in series), series
    tags = page.eval_on_selector_all("#main-graph div", "ds => ds.map(d => d.innerText.trim()).filter(Boolean)")
    assert {"cuda-core-v0.1.0", "cuda-core-v0.2.0"} <= set(tags)
    shoot(page, "asv-graph-fixture.png")


def test_the_regressions_page_feed_and_json_say_what_the_records_hold(site, steps, known, page):
    """Every row: a case a step flagged, with its ratio, interval, status and the commits by name; the open ones
    (confirmed, not yet confirmed) apart from the one another start did not reproduce; nothing the engine calls the
    same. The Atom feed has one item per open regression; asv's regressions.json the same flags,
    which asv's own Regressions view lists."""
    html, results_dir, origin = site
    page.goto(f"{origin}/regressions.html")
    rows = page.eval_on_selector_all(
        "table.regressions tr.case",
        "trs => trs.map(tr => [tr.closest('table').dataset.table, tr.dataset.case, tr.dataset.base, tr.dataset.head, "
        "+tr.dataset.ratio, +tr.dataset.low, +tr.dataset.high, tr.dataset.status, tr.children[1].innerText])")
    expected, put_down = [], []
    for step in steps:
        for case in step["cases"]:
            if case["verdict"] in ("regression", "not reproduced") and not case.get("control"):
                table = "open" if case["verdict"] == "regression" else "not reproduced"
                (put_down if history.attributed(step, case) else expected).append(
                    ["put down" if history.attributed(step, case) else table, case["name"], step["base"],
                     step["head"], case["ratio"], case["low"], case["high"], summary.status(case)])
    # every flag is on the page: those put down to a cuda-bindings change in a table of their own
    assert sorted(r[:8] for r in rows if r[0] != "put down") == sorted(expected)
    assert sorted(r[:4] for r in rows if r[0] == "put down") == sorted(r[:4] for r in put_down)
    assert len(rows) == 6 and len(put_down) == 1
    assert {r[7] for r in rows if r[0] != "put down"} == {"confirmed", "not yet confirmed", "not reproduced"}
    for row in rows:
        base = next(n for n, sha in SHA.items() if sha == row[2])
        assert row[8].startswith(TAGS.get(base, row[2][:9]))  # a release by its name
    assert "cuda-core-v0.2.0 → 0e5bc0a68" in page.inner_text("main")
    assert all(abs(r[4] - 1) > 0.02 for r in rows if r[0] == "open")  # nothing the engine called the same
    shoot(page, "regressions-fixture.png")

    feed = ET.parse(html / "regressions.xml").getroot()
    ns = {"a": "http://www.w3.org/2005/Atom"}
    titles = [e.find("a:title", ns).text for e in feed.findall("a:entry", ns)]
    opened = [r for r in expected if r[0] == "open"]
    assert len(titles) == len(opened)
    for _, name, base, head, ratio, low, high, state in opened:
        where = f"{summary.name(base, known)} → {summary.name(head, known)}"
        assert f"×{ratio:.3f} [{low:.3f}, {high:.3f}] {name} at {where} ({state})" in titles
    listed = json.loads((html / "regressions.json").read_text())["regressions"]
    assert sorted(e[0] for e in listed) == sorted(r[1] for r in opened)
    for name, _, _, _, last, best, ((_, _, before, after),) in listed:
        # asv's times per call are the ones regressions.html shows, base and head, of the same measurement
        cases = [case_of(step, name) for step in steps for r in opened if r[1] == name
                 and (step["base"], step["head"]) == (r[2], r[3])]
        case = next(c for c in cases if (c["base_ns"] * 1e-9, c["head_ns"] * 1e-9) == pytest.approx((before, after)))
        assert (before, after) == (best, last)
        assert per_call(case).startswith(f"{fmt(before)} → {fmt(after)}")
    page.goto(f"{origin}/asv.html#/regressions")
    page.wait_for_selector("#regressions-body table tbody tr", timeout=20000)
    named = page.eval_on_selector_all("#regressions-body table:not(.ignored) td:first-child a",
                                      "as => as.map(a => a.innerText.replace(/\\s+/g, ''))")
    assert sorted(named) == sorted(r[1].replace(" ", "") for r in opened)


# --- the graph of what the engine knows --------------------------------------------------------------------
def expected_chains(steps, name):
    """A case's paired chains at the fixture's commits, one per build, from the records: the 12.9.10 wheel's
    from v0.1.0 (×1) to v0.2.0 one release step on; the 13.3.1 wheel's from m1 (×1) one main step at a time to
    m4. The step v0.2.0 -> m4 runs 12.9.10 on one side and 13.3.1 on the other: no chain multiplies it."""
    ratio = {k: history.chain_link(case_of(step_of(steps, *k), name))["ratio"]
             for k in (("v010", "v020"), ("m1", "m2"), ("m2", "m3"), ("m3", "m4"))}
    wheel = {"m1": 1.0}
    for base, head in (("m1", "m2"), ("m2", "m3"), ("m3", "m4")):
        wheel[head] = wheel[base] * ratio[(base, head)]
    return {"12.9.10 wheel": {"v010": 1.0, "v020": ratio[("v010", "v020")]}, "13.3.1 wheel": wheel}


ORDER = ["v010", "v020", "m1", "m2", "m3", "m4"]


@pytest.mark.parametrize("benchmark,case", [("bench_device.SetCurrent.time_set_current", ""),
                                            ("bench_event.EventCreate.time_event_create", ""),
                                            ("bench_launch.Launch.time_launch", "16 ptr")])
def test_a_chain_multiplies_the_steps_of_one_build_and_says_where_and_why_it_restarts(
        site, steps, known, page, benchmark, case):
    """graph.html: per library one chain per build, never one across builds. The 12.9.10 wheel's runs from
    v0.1.0 to v0.2.0 and the 13.3.1 wheel's from m1 to m4, each point the product of that build's paired ratios;
    no drawn line joins v0.2.0 to m1, where the builds change, and the notes say the chain starts again at m1 and
    why. m3, shown as its build from the commit, stands on the wheel's chain as another build (a thin line). A
    marker sits exactly where a step flagged the case (◆ where the flag is put down to a cuda-bindings change);
    asv's medians one line per library below, the C++ twin's too, of m3 the build from its own cuda_bindings
    alone; the x axis names the releases; the graphs' numbers are in a table too."""
    html, results_dir, origin = site
    page.goto(f"{origin}/graph.html#machine={MACHINE}&benchmark={benchmark}&case={case.replace(' ', '%20')}")
    page.wait_for_function("window.cudaBenchGraph && window.cudaBenchGraph.ready", timeout=20000)
    drawn = page.evaluate("""() => ({chain: cudaBenchGraph.chain.getData().map(s => [s.cb, s.data]),
                                     medians: cudaBenchGraph.medians.getData().map(s => [s.cb, s.data]),
                                     ticks: cudaBenchGraph.chain.getAxes().xaxis.ticks.map(t => t.label),
                                     data: cudaBenchGraph.data.cases[cudaBenchGraph.label]})""")
    assert drawn["ticks"] == [TAGS.get(n, SHA[n][:9]) for n in ORDER]
    for api in ("bindings", "core", "cupy"):
        name = f"{benchmark}('{api}'{', ' + repr(case) if case else ''})"
        points = drawn["data"][api]["chain"]  # [x, value, low, high, root, build, steps]
        found = {}
        for x, value, _, _, root, build, _ in points:
            found.setdefault(build, {})[ORDER[x]] = value
            assert root == summary.name(SHA[{"12.9.10 wheel": "v010", "13.3.1 wheel": "m1"}[build]], known)
        want = expected_chains(steps, name)
        assert found.keys() == want.keys()
        for build, values in want.items():
            assert found[build] == pytest.approx(values, rel=1e-9), (api, build)
        segments = [(line[i][0], line[i + 1][0]) for cb, line in drawn["chain"] if cb["kind"] == "chain"
                    and cb["api"] == api for i in range(len(line) - 1) if line[i] and line[i + 1]]
        assert (1, 2) not in segments and all(b - a == 1 for a, b in segments)  # no line across builds
        thin = {(line[i][0], line[i + 1][0]) for cb, line in drawn["chain"] if cb["kind"] == "chain"
                and cb["api"] == api and cb.get("other") for i in range(len(line) - 1) if line[i] and line[i + 1]}
        assert thin == {(3, 4), (4, 5)}  # to and from m3, which is shown as its build from the commit
        marks = sorted((s[0]["verdict"], p[0]) for s in drawn["chain"] if s[0]["kind"] == "flag"
                       and s[0]["api"] == api for p in s[1])
        recorded = sorted(("put down" if history.attributed(st, c) else c["verdict"],
                           ORDER.index(next(n for n, sha in SHA.items() if sha == st["head"])))
                          for st in steps for c in st["cases"] if c["name"] == name
                          and c["verdict"] in ("regression", "improvement", "not reproduced"))
        assert marks == recorded
    notes = page.inner_text("#graph-notes")
    assert (f"(13.3.1 wheel) starts again at ×1.000 at {SHA['m1'][:9]}: the builds change there (12.9.10 wheel → "
            "13.3.1 wheel), and a chain never crosses builds") in notes
    medians = {s[0]["api"]: s[1] for s in drawn["medians"]}
    assert sorted(medians) == ["bindings", "core", "cpp", "cupy"]
    assert all(len(points) == 6 and None not in points for points in medians.values())
    (scale,) = [scale for commit, _, scale, _ in known_answers.BUILDS if commit == "m3"]
    for api, points in medians.items():
        combo = (f"'{api}'", *([repr(case)] if case else ())) if api != "cpp" else None
        if combo:
            assert points[4][1] == pytest.approx(known_answers.MEDIANS[(benchmark, combo)][4] * scale * 1e-9)
    assert "cuda-bindings 12.9.10 wheel → 13.3.1 wheel" in page.inner_text("#chain")
    rows = page.eval_on_selector_all("#graph-data tbody tr", "trs => trs.map(tr => [tr.dataset.commit, "
                                     "tr.dataset.api, tr.cells[2].textContent, tr.cells[4].textContent])")
    core = f"{benchmark}('core'{', ' + repr(case) if case else ''})"
    wheel = expected_chains(steps, core)["13.3.1 wheel"]["m4"]
    assert [SHA["m4"], "core", f"×{wheel:.3f}"] == [r[:2] + [r[2].split(" ")[0]] for r in rows
                                                   if r[0] == SHA["m4"] and r[1] == "core"][0]
    if benchmark.endswith("time_event_create"):
        shoot(page, "graph-fixture.png")


def test_every_page_restarts_a_chain_where_the_build_changes(site, steps, known, page):
    """The front page's hover, the Steps page and the Markdown say the same of chains as the graph: at main's head
    m4 (the 13.3.1 wheel) a case's chain runs from m1, three steps of that wheel, and says that it starts there
    because the builds change from the 12.9.10 wheel; the Steps page names each step's build, and the step
    v0.2.0 -> m4 as across builds, multiplied by no chain."""
    html, results_dir, origin = site
    page.goto(f"{origin}/index.html")
    title = page.get_attribute("tr[data-benchmark='bench_event.EventCreate.time_event_create'] td.core", "title")
    value = expected_chains(steps, EVENT_CORE)["13.3.1 wheel"]["m4"]
    line = next(li for li in title.splitlines() if li.startswith("Paired chain"))
    assert line.startswith(f"Paired chain (every step's builds: cuda-bindings 13.3.1 wheel): ×{value:.3f} [")
    assert line.endswith(f"since {SHA['m1'][:9]} (3 steps); it starts at {SHA['m1'][:9]}, where the builds change "
                         "from cuda-bindings 12.9.10 wheel: a chain never crosses builds")
    page.goto(f"{origin}/steps.html")
    built = dict(page.eval_on_selector_all("tr[data-base]", "trs => trs.map(tr => [tr.dataset.base + tr.dataset.head, "
                                           "tr.querySelector('.built-from').innerText])"))
    assert built[SHA["m3"] + SHA["m4"]] == "cuda-bindings 13.3.1 wheel"
    assert built[SHA["v010"] + SHA["v020"]] == "cuda-bindings 12.9.10 wheel"
    assert built[SHA["v020"] + SHA["m4"]] == ("cuda-bindings 12.9.10 wheel → 13.3.1 wheel: across builds, so no "
                                              "paired chain multiplies it")


def test_every_page_names_a_release_by_its_tag(site, page):
    """No page shows a release commit by its hash: the tag names it on every page and on asv's
    graphs."""
    html, results_dir, origin = site
    for url in ("index.html", "releases.html", "regressions.html", "steps.html",
                f"graph.html#machine={MACHINE}&benchmark=bench_event.EventCreate.time_event_create",
                f"asv.html#bench_event.EventCreate.time_event_create?machine={MACHINE}"):
        page.goto(f"{origin}/{url}")
        page.wait_for_timeout(300)
        if url.startswith("graph"):
            page.wait_for_function("window.cudaBenchGraph && window.cudaBenchGraph.ready", timeout=20000)
        if url.startswith("asv"):
            page.wait_for_function(ASV_GRAPH_DRAWN, timeout=20000)
        text = page.inner_text("body")
        for name in TAGS:
            assert SHA[name][:7] not in text, (url, name)
        assert any(tag in text for tag in TAGS.values()), url


def test_the_steps_page_lists_the_newest_step_first(site):
    """steps.html: main's steps (and the newest release's to main's head) newest head first, then the release
    ladder's, newest release first: the step that decides whether main's head is fine is the first row."""
    html, results_dir, origin = site
    rows = re.findall(r'<tr data-base="(\w+)" data-head="(\w+)"', (html / "steps.html").read_text())
    name = {sha: n for n, sha in SHA.items()}
    assert [(name[b], name[h]) for b, h in rows] == [("v020", "m4"), ("m3", "m4"), ("m2", "m3"), ("m1", "m2"),
                                                     ("v010", "v020")]


# --- text the pages did not write ------------------------------------------------------------------------
#: what text the pages did not write would have made of them, had it been taken as HTML
INJECTED = """() => ({bold: [...document.querySelectorAll('b')].filter(b => /^(bold|tag)$/.test(b.textContent))
                      .length, images: document.querySelectorAll('img[src="x"]').length,
                      scripts: [...document.scripts].filter(s => s.textContent.includes('alert(')).length})"""


def shows_literally(page, selector, text):
    """Whether an element matching ``selector`` shows ``text`` as it was written, or has it as its title."""
    return page.eval_on_selector_all(selector, "(es, text) => es.some(e => e.innerText.includes(text) "
                                     "|| e.getAttribute('title') === text)", text)


@pytest.mark.parametrize("url,where", [
    ("index.html", ["p.head", f"a.commit[data-commit='{SHA['m4']}']"]),
    ("releases.html", [f"a.commit[data-commit='{SHA['m4']}']"]),
    ("regressions.html", [f"a.commit[data-commit='{SHA['m4']}']"]),
    ("steps.html", [f"a.commit[data-commit='{SHA['m4']}']", "tr[data-verdict='not measured']"]),
    (f"graph.html#machine={MACHINE}&benchmark=bench_event.EventCreate.time_event_create", ["#graph-commits td"]),
    (f"asv.html#bench_event.EventCreate.time_event_create?machine={MACHINE}", ["#main-graph div"]),
    ("asv.html#summarylist", ["#summarylist-body"]),
])
def test_every_page_shows_text_it_did_not_write_literally_and_injects_nothing(site, page, url, where):
    """A commit title, a tag, a case name and a worker's message holding quotes, ``<b>``, ``&``, ``<script>`` and
    ``<img onerror>`` (make.py's HOSTILE ...): each page shows them as written, as text or as a title, and
    no element or script of theirs gets into the page (no alert runs: ``browser_tab`` checks)."""
    html, results_dir, origin = site
    page.goto(f"{origin}/{url}")
    if url.startswith("graph"):
        page.wait_for_function("window.cudaBenchGraph && window.cudaBenchGraph.ready", timeout=20000)
    if url.startswith("asv.html#bench"):
        page.wait_for_function(ASV_GRAPH_DRAWN, timeout=20000)
    if url.startswith("asv.html#summary"):
        page.wait_for_selector("#summarylist-body table tbody tr", timeout=20000)
    page.wait_for_timeout(300)
    assert page.evaluate(INJECTED) == {"bold": 0, "images": 0, "scripts": 0}, url
    texts = {"p.head": HOSTILE, "a.commit": HOSTILE, "#graph-commits td": HOSTILE, "#main-graph div": HOSTILE_TAG}
    for selector in where:
        if selector == "tr[data-verdict='not measured']":
            assert page.get_attribute(selector, "data-case") == HOSTILE_CASE
            assert shows_literally(page, selector, HOSTILE_CASE) and shows_literally(page, selector, HOSTILE_ERROR)
        elif selector == "#summarylist-body":
            assert "bench_event.EventCreate.time_event_create" in page.inner_text(selector)
        else:
            text = next(v for k, v in texts.items() if selector.startswith(k))
            assert shows_literally(page, selector, text), (url, selector)


def test_the_graph_page_takes_what_its_data_says_as_text(site, tmp_path):
    """graph.js on data whose every string is hostile (commit names, titles, cuda-bindings, the C++ twin's name,
    the machine): the axis, the legend, the notes and the commits table show each as written; no element or
    script of theirs gets into the page."""
    html, results_dir, origin = site
    copy = tmp_path / "html"
    shutil.copytree(html, copy)
    benchmark = "bench_event.EventCreate.time_event_create"
    path = copy / "paired" / MACHINE / f"{benchmark}.js"
    name, data = graph_script(path)
    assert name == f"{MACHINE}/{benchmark}"
    for i, commit in enumerate(data["commits"]):
        commit.update(name=f"{HOSTILE_TAG}{i}", title=HOSTILE, bindings=HOSTILE_ERROR if i > 2 else HOSTILE_CASE)
    for per in data["cases"].values():
        if "cpp" in per:
            per["cpp"]["twin"] = HOSTILE_CASE
        for series in per.values():
            series["chain"] = [[*p[:4], HOSTILE_TAG] if p[0] == 1 else p for p in series["chain"]]
    path.write_text(graph_page.data_script(name, data))
    server, there = serve(copy)
    try:
        for tab in browser_tab(there):
            tab.goto(f"{there}/graph.html#machine={MACHINE}&benchmark={benchmark}")
            tab.wait_for_function("window.cudaBenchGraph && window.cudaBenchGraph.ready", timeout=20000)
            assert tab.evaluate(INJECTED) == {"bold": 0, "images": 0, "scripts": 0}
            labels = tab.eval_on_selector_all("#chain .flot-x-axis .flot-tick-label", "ds => ds.map(d => d.innerText)")
            assert labels == [f"{HOSTILE_TAG}{i}" for i in range(len(data["commits"]))]
            assert tab.eval_on_selector_all("#graph-commits td:nth-child(3)", "ds => ds.map(d => d.innerText)") \
                == [HOSTILE] * len(data["commits"])
            assert f"C++ twin ({HOSTILE_CASE})" in tab.inner_text("#graph-legend")
            assert f"cuda-bindings {HOSTILE_CASE} \u2192 {HOSTILE_ERROR}" in tab.inner_text("#chain")
            assert f"at {HOSTILE_TAG}:" in tab.inner_text("#graph-notes")
    finally:
        server.shutdown()


def graph_script(path):
    """(name, data) of one of the graph page's data scripts (``graph_page.data_script``)."""
    text, call = path.read_text(), "cudaBenchData("
    assert text.startswith(call) and text.endswith(");\n"), text[:80]
    name, end = json.JSONDecoder().raw_decode(text, len(call))
    data, end = json.JSONDecoder().raw_decode(text, end + len(",\n"))
    assert text[end:] == ");\n"
    return name, data


def test_what_the_pages_did_not_write_is_escaped_in_their_html_too(site):
    """The files themselves, whatever a browser would make of them: no hostile text raw in any page, every one of
    them in an attribute escaped with its quotes."""
    html, results_dir, origin = site
    raw = [HOSTILE, HOSTILE_TAG, HOSTILE_CASE, HOSTILE_ERROR, "<b>bold</b>", "<script>alert(", "<img src=x"]
    for page_file in sorted(html.glob("*.html")):
        text = page_file.read_text()
        assert not [r for r in raw if r in text], page_file.name
    assert f'title="{pages_html.esc(HOSTILE)}"' in (html / "index.html").read_text()
    assert "&quot;quotes&quot;" in pages_html.esc(HOSTILE) and "&#x27;" in pages_html.esc(HOSTILE_TAG)


# --- a history that cannot all be read -------------------------------------------------------------------
PAGES = ["index.html", "releases.html", "regressions.html", "steps.html",
         f"graph.html#machine={MACHINE}&benchmark=bench_event.EventCreate.time_event_create"]


def cut(path, line=None):
    """``path`` cut off halfway (of its ``line``, counted from 1), as a write killed mid-way leaves it."""
    if line is None:
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        return path
    lines = path.read_bytes().splitlines(keepends=True)
    lines[line - 1] = lines[line - 1][: len(lines[line - 1]) // 2] + b"\n"
    path.write_bytes(b"".join(lines))
    return path


def recheck_line(results_dir, base, head):
    """The line of steps.jsonl that measured the step base -> head again (its second record)."""
    found = [i for i, line in enumerate((results_dir / MACHINE / "steps.jsonl").read_text().splitlines(), 1)
             if json.loads(line)["base"] == SHA[base] and json.loads(line)["head"] == SHA[head]]
    return found[1]


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """The fixture history published with main's head's results file cut off and the recheck that did not
    reproduce SetCurrent('bindings') at m2 -> m3 cut in half: (publish's process, html, results, origin, the
    steps.jsonl line cut, the results file cut)."""
    tmp = tmp_path_factory.mktemp("broken")
    results_dir = tmp / "results"
    shutil.copytree(FIXTURE / "results", results_dir)
    line = recheck_line(results_dir, "m2", "m3")
    cut(results_dir / MACHINE / "steps.jsonl", line)
    head_file = cut(next((results_dir / MACHINE).glob(f"{SHA['m4'][:8]}-*.json")))
    conf = asv_conf(tmp, tmp / "no-clone-here", sys.executable, results_dir=str(results_dir))
    proc = run_module("cuda_bench.publish", "--config", conf, check=False)
    server, origin = serve(tmp / "html")
    yield proc, tmp / "html", results_dir, origin, line, head_file
    server.shutdown()


def test_what_could_not_be_read_is_named_on_every_page_and_publish_exits_2(broken, broken_page):
    """A record's line and a results file that cannot be read: publish still publishes, names each (file and line)
    on stderr and on top of every page, and exits 2; the flag whose recheck was cut off reads "not yet confirmed"
    under that banner, never silently."""
    page = broken_page
    proc, html, results_dir, origin, line, head_file = broken
    assert proc.returncode == 2, proc.stderr[-3000:]
    steps_file = results_dir / MACHINE / "steps.jsonl"
    assert f"records: {steps_file}:{line}: does not parse" in proc.stderr and f"skipping {head_file}: " in proc.stderr
    # each named once, and counted in the command's last line
    assert proc.stderr.count(f"{steps_file}:{line}") == 1 and proc.stderr.count(f"skipping {head_file}") == 1
    assert "2 part(s) of the history could not be read (each named above)" in proc.stderr.splitlines()[-1]
    for url in PAGES:
        page.goto(f"{origin}/{url}")
        named = page.eval_on_selector_all("div.unreadable li", "lis => lis.map(li => [li.dataset.file, li.dataset.line,"
                                          " li.innerText])")
        assert [n[:2] for n in named] == [[f"results/{MACHINE}/{head_file.name}", "1"],
                                          [f"results/{MACHINE}/steps.jsonl", str(line)]], (url, named)
        assert "could not be read" in page.inner_text("div.unreadable")
        # and what the cut line is about, as far as it can be read: the step from m2 (its base comes first)
        assert f"(a record of the step {SHA['m2'][:9]} → {SHA['m3'][:9]}" in named[1][2] or \
            f"(a record of a step from {SHA['m2'][:9]}" in named[1][2], named[1][2]
        assert page.locator("div.unreadable").bounding_box()["y"] < page.locator("h1").bounding_box()["y"]
    page.goto(f"{origin}/regressions.html")
    assert page.get_attribute(f"tr.case[data-case=\"{SET_BINDINGS}\"]", "data-status") == "not yet confirmed"


def test_a_head_whose_results_file_cannot_be_read_is_named_not_replaced(broken, broken_page):
    """main's head m4, whose results file was cut off, is named as main's head that could not be read, with its
    file; what the page says next is of m3, called the newest commit that could be read, never main's head."""
    page = broken_page
    proc, html, results_dir, origin, line, head_file = broken
    page.goto(f"{origin}/index.html")
    lost = page.locator("p.lost-head")
    assert lost.get_attribute("data-commit") == SHA["m4"]
    text = lost.inner_text()
    assert text.startswith(f"Main's head: {SHA['m4'][:9]}") and "its results file could not be read" in text
    assert f"results/{MACHINE}/{head_file.name} line 1" in text
    assert page.get_attribute("p.head", "data-commit") == SHA["m3"]
    assert page.inner_text("p.head").startswith("The newest commit of main whose results could be read: ")
    assert "Main's head" not in page.inner_text("p.head")


def test_report_names_what_it_could_not_read_and_exits_2_unless_a_regression_outranks_it(broken, capsys):
    """`cuda-bench report` (every form) and the nightly issue say on top which file and line could not be read, and
    exit 2; the issue, whose open regressions are a regression, exits 1, and says it too."""
    from cuda_bench import cli

    proc, html, results_dir, origin, line, head_file = broken
    expected = [f"> - `results/{MACHINE}/{head_file.name}` line 1: does not parse",
                f"> - `results/{MACHINE}/steps.jsonl` line {line}: does not parse"]
    for argv, status in ((["report"], 2), (["report", "--steps"], 2), (["report", "--releases"], 2),
                         (["report", "--issue"], 1)):
        assert cli.main([*argv, "--results", str(results_dir)]) == status, argv
        out, err = capsys.readouterr()
        said = [line for line in out.splitlines() if line.startswith("> - ")]
        assert [s.split(": does not parse")[0] + ": does not parse" for s in said] == expected, (argv, said)
        assert "part(s) of the history could not be read" in err
    assert cli.main(["report", "--results", str(results_dir)]) == 2
    front = capsys.readouterr().out
    assert f"Main's head: `{SHA['m4'][:9]}`" in front and "**its results file could not be read**" in front
    assert f"The newest commit of main whose results could be read: `{SHA['m3'][:9]}`" in front
    issue = cli.main(["report", "--issue", "--results", str(results_dir)]), capsys.readouterr().out
    assert issue[0] == 1 and issue[1].startswith(report.MARKER + "\n> **Part of the history could not be read**")


# --- publishing -----------------------------------------------------------------------------------------
def test_publish_needs_no_repository_and_plain_asv_publish_makes_the_same_site(site, tmp_path):
    """The fixture's commits exist in no repository: cuda-bench publish (above) and plain ``asv publish``, through
    the project's plugin, both publish from results/ alone, and say the same."""
    html, results_dir, origin = site
    conf = asv_conf(tmp_path, tmp_path / "no-clone-here", sys.executable, results_dir=str(results_dir),
                    html_dir=str(tmp_path / "html"))
    run_asv(conf, "publish")
    for name in ("regressions.json", "overview.json", "index.html", "releases.html", "regressions.html"):
        assert (tmp_path / "html" / name).read_text() == (html / name).read_text(), name
    index = json.loads((html / "index.json").read_text())
    assert index["tags"] == {"cuda-core-v0.1.0": 0, "cuda-core-v0.2.0": 1,
                             pages_html.esc(HOSTILE_TAG): 3}  # asv's graphs take it as HTML
    assert [index["revision_to_hash"][str(i)] for i in range(6)] == list(SHA.values())
    for page_file in html.glob("*.html"):
        text = page_file.read_text()
        assert 'src="http' not in text and "cdn" not in text.lower(), page_file.name


def test_a_corrupt_results_file_is_skipped_with_its_name(site, tmp_path):
    """A results file cut off mid-write, JSON that is no asv results, or asv's keys holding the wrong shapes:
    publishing goes on without it, a line naming it, and exit 2 (something could not be read), every page saying
    so on top."""
    html, results_dir, origin = site
    copy = tmp_path / "results"
    shutil.copytree(results_dir, copy)
    newest = next((copy / MACHINE).glob(f"{SHA['m4'][:8]}-*.json"))
    bad = newest.with_name("deadbeef-" + newest.name.split("-", 1)[1])
    bad.write_text(newest.read_text()[: len(newest.read_text()) // 2])
    stray = newest.with_name("cafebabe-" + newest.name.split("-", 1)[1])
    stray.write_text('{"not": "asv"}')
    conf = asv_conf(tmp_path, tmp_path / "no-clone-here", sys.executable, results_dir=str(copy))
    proc = run_module("cuda_bench.publish", "--config", conf, check=False)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert f"results: skipping {bad}: " in proc.stderr
    assert f"results: skipping {stray}: not an asv results file" in proc.stderr
    assert proc.stderr.count(f"skipping {bad}") == 1 and proc.stderr.count(f"skipping {stray}") == 1  # once each
    assert json.loads((tmp_path / "html" / "overview.json").read_text())
    assert (tmp_path / "html" / "README.md").exists()
    named = re.findall(r'<li data-file="([^"]+)" data-line="(\d*)">', (tmp_path / "html" / "index.html").read_text())
    assert sorted(named) == [(f"results/{MACHINE}/{stray.name}", ""), (f"results/{MACHINE}/{bad.name}", "1")]


def test_a_failed_publish_keeps_the_dashboard_that_was_there(site, tmp_path):
    """asv publish fails (here: results without asv's benchmarks.json): html/ is left as it was, README and all."""
    html, results_dir, origin = site
    target = tmp_path / "html"
    shutil.copytree(html, target)
    before = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    broken = tmp_path / "results"
    shutil.copytree(results_dir, broken)
    (broken / "benchmarks.json").unlink()
    conf = asv_conf(tmp_path, tmp_path / "no-clone-here", sys.executable, results_dir=str(broken),
                    html_dir=str(target))
    proc = run_module("cuda_bench.publish", "--config", conf, check=False)
    assert proc.returncode == 3 and proc.stderr.strip().splitlines()[-1].startswith("publish: asv publish exited")
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == before


def test_the_nightly_issue_lists_mains_open_regressions_as_the_pages_do(steps, known):
    """report.issue_body: main's open regressions (the confirmed one and the one not yet confirmed), not the one
    another start did not reproduce; the newest release against main's head is counted in a line of its own."""
    text, count = report.issue_body({MACHINE: steps}, known=known)
    assert count == 2
    assert f"`{EVENT_CORE}`" in text and f"`{LAUNCH_16}`" in text and SET_BINDINGS not in text
    assert "cuda-core-v0.2.0" in text


# --- opened from disk ----------------------------------------------------------------------------
#: the project's own pages, the graph at a case with a chain per library and a C++ twin
OWN_PAGES = ["index.html", "releases.html", "regressions.html", "steps.html", "glossary.html",
             f"graph.html#machine={MACHINE}&benchmark=bench_launch.Launch.time_launch"
             "&case=16%20ptr"]
GRAPH_READY = "window.cudaBenchGraph && window.cudaBenchGraph.ready"
GRAPH_DRAWN = """() => ({chain: cudaBenchGraph.chain.getData().map(s => [s.cb, s.data]),
                        medians: cudaBenchGraph.medians.getData().map(s => [s.cb, s.data]),
                        ticks: cudaBenchGraph.chain.getAxes().xaxis.ticks.map(t => t.label)})"""


def test_the_projects_pages_work_opened_from_disk(site):
    """Opened as files (file://, no server), each of the project's pages says what it says when
    served, and the graph draws the same chains and medians from its data scripts; no console error,
    no request outside html/."""
    html, results_dir, origin = site
    disk = html.as_uri()
    shown, drawn = {}, {}
    for there in (origin, disk):
        for tab in browser_tab(there):
            for url in OWN_PAGES:
                tab.goto(f"{there}/{url}")
                if url.startswith("graph"):
                    tab.wait_for_function(GRAPH_READY, timeout=20000)
                    drawn[there] = tab.evaluate(GRAPH_DRAWN)
                shown[there, url] = tab.inner_text("main")
    assert tab.url.startswith("file://")
    for url in OWN_PAGES:
        assert shown[disk, url] == shown[origin, url], url
    assert drawn[disk] == drawn[origin]
    lines = {s[0]["api"] for s in drawn[disk]["chain"] if s[0]["kind"] == "chain"}
    assert lines == {"bindings", "core", "cupy"} and len(drawn[disk]["ticks"]) == 6


def test_opened_from_disk_the_link_to_asvs_pages_says_how_to_serve_them(site):
    """asv's pages cannot fetch their data opened as files (browsers refuse it to file://):
    opened from disk, each of the project's pages has its navigation's link to asv's pages say how
    to serve them, on hover and, clicked, in one line under the navigation, in place of opening a
    page that cannot load. Served, the link opens asv.html, whose navigation bar leads back to the
    front page."""
    html, results_dir, origin = site
    disk = html.as_uri()
    for tab in browser_tab(disk):
        for url in OWN_PAGES:
            tab.goto(f"{disk}/{url}")
            link = tab.locator("nav.site a[href='asv.html']")
            assert "cuda-bench serve" in link.get_attribute("title"), url
            assert tab.locator("#asv-serve").count() == 0
            link.click()
            line = tab.locator("#asv-serve")
            line.wait_for(timeout=5000)
            assert tab.url == f"{disk}/{url}"  # still the page it was
            text = line.inner_text()
            assert "cuda-bench serve" in text and "python3 -m http.server 8080 -d html" in text, url
            assert "http://127.0.0.1:8080/asv.html" in text
            nav, box = tab.locator("nav.site").bounding_box(), line.bounding_box()
            bottom = nav["y"] + nav["height"]
            assert nav["y"] <= box["y"] and box["y"] + box["height"] <= bottom, (nav, box)
            assert box["height"] < 80, box
    for tab in browser_tab(origin):
        tab.goto(f"{origin}/index.html")
        assert tab.locator("nav.site a[href='asv.html']").get_attribute("title") is None
        tab.click("nav.site a[href='asv.html']")
        tab.wait_for_url(f"{origin}/asv.html*", timeout=20000)
        tab.wait_for_function("$('#project-name').text() === 'cuda-python'", timeout=20000)
        assert tab.locator("#asv-serve").count() == 0
        assert tab.get_attribute("#project-name", "href") == "index.html"  # project_url


# --- asv's own files -------------------------------------------------------------------------
#: a library's tag in asv's pages: a CDN's address in asv's files, vendor/'s in the published ones
ASSET = re.compile(r'<(?:script|link)\b[^>]*?(?:src|href)="(?:https?://|vendor/)[^"]+"[^>]*>'
                   r'(?:</script>)?')
CDN = re.compile(r'<(?:script|link)\b[^>]*?(?:src|href)="https?://')


def test_asvs_files_are_published_as_asv_ships_them_but_for_their_asset_addresses(site):
    """Every file of asv's app (asv/www in asv's package) is published byte for byte as asv ships
    it, its index.html as asv.html; in the .html files the one difference is each library's
    address, pointing at html/vendor/ instead of a CDN. Nothing of asv's code is patched."""
    import asv

    html, results_dir, origin = site
    www = Path(asv.__file__).parent / "www"
    shipped = sorted(p.relative_to(www) for p in www.rglob("*") if p.is_file())
    assert {"index.html", "graphdisplay.js", "summarylist.js"} <= {str(p) for p in shipped}
    for path in shipped:
        published = html / ("asv.html" if str(path) == "index.html" else path)
        ours, theirs = published.read_bytes(), (www / path).read_bytes()
        if path.suffix != ".html":
            assert ours == theirs, path
            continue
        ours, theirs = ours.decode(), theirs.decode()
        assert ASSET.sub("<asset>", ours) == ASSET.sub("<asset>", theirs), path
        assert not CDN.search(ours), path  # self-contained
        copies = re.findall(r'(?:src|href)="(vendor/[^"]+)"', ours)
        assert all((html / copy).is_file() for copy in copies), path
    assert "<title>airspeed velocity</title>" in (html / "asv.html").read_text()


# --- the glossary --------------------------------------------------------------------------------
#: words a cuda-python maintainer may not know -> how a page writes them
JARGON = {
    "Paired step": r"\bpaired steps?\b",
    "Paired chain": r"\bchains?\b",
    "Process pair": r"\bprocess pairs?\b",
    "Machine start": r"\bmachine starts?\b",
    "Memory layout per process": r"\blayout per process\b",
    "Fixed layout": r"\b(?:one|fixed) layout\b|\blayout per build\b",
    "Fast state": r"\bfast state\b",
    "Slow state": r"\bslow state\b",
    "Harness floor": r"\bfloor\b",
    "C++ twin": r"\btwins?\b",
    "Control": r"\bcontrols?\b",
    "Release ladder": r"\bladder\b",
    "cuda-bindings auto": r"\bauto\b",
    "Built from the commit, wheel": r"\bbuilt from (?:the|each) commit\b|\bwheel\b",
    "Put down to a cuda-bindings change": r"\bput down\b",
    "In one process": r"\bin one process\b",
    "Cleared by": r"\bcleared by\b",
    "Not measured, on one side only": r"\bnot measured\b|\bon one side only\b",
    "Threshold": r"\bthresholds?\b",
    "Over C++": r"\bover (?:its )?C\+\+",
    "Work per call": r"\bwork per call\b",
    "Geometric mean per library": r"\bgeometric mean\b",
    "Confirmed, not yet confirmed, not reproduced": r"\bnot yet confirmed\b|\bnot reproduced\b",
}
#: what a page says, hover texts included
PAGE_TEXT = """() => [document.body.innerText, ...[...document.querySelectorAll('[title]')]
                      .map(e => e.getAttribute('title'))].join('\\n')"""
GLOSSARY_LINK = "nav.site a[href='glossary.html']"


def test_every_page_links_the_glossary_and_it_has_each_word_they_use(site, page):
    """Every one of the project's pages links to glossary.html from its navigation bar, and asv's
    pages lead back to them (the front page); each word of JARGON that a page, asv's included, uses,
    in its text or on hover, has an entry there, of one line."""
    html, results_dir, origin = site
    page.goto(f"{origin}/glossary.html")
    entries = page.eval_on_selector_all("dl.glossary dt", "dts => dts.map(dt => [dt.innerText, "
                                        "dt.nextElementSibling.innerText])")
    glossary = dict(entries)
    assert len(glossary) == len(entries)
    assert all(text and "\n" not in text for text in glossary.values())
    used = {}
    for url in (*OWN_PAGES, "asv.html#summarylist",
                f"asv.html#bench_device.SetCurrent.time_set_current?machine={MACHINE}"):
        page.goto(f"{origin}/{url}")
        if url.startswith("graph"):
            page.wait_for_function(GRAPH_READY, timeout=20000)
        if "summarylist" in url:
            page.wait_for_selector("#summarylist-body table tbody tr", timeout=20000)
        elif url.startswith("asv"):
            page.wait_for_function(ASV_GRAPH_DRAWN, timeout=20000)
        if url.startswith("asv"):
            assert page.get_attribute("#project-name", "href") == "index.html", url
        else:
            link = page.locator(GLOSSARY_LINK)
            assert link.count() == 1 and link.is_visible(), url
        if url == "glossary.html":
            assert "active" in link.get_attribute("class")
            continue
        text = page.evaluate(PAGE_TEXT)
        for word, pattern in JARGON.items():
            if re.search(pattern, text, re.IGNORECASE):
                used.setdefault(word, []).append(url.split("#")[0])
    assert {"Paired step", "Paired chain", "Process pair", "Machine start", "Harness floor",
            "C++ twin", "Release ladder", "Built from the commit, wheel", "Put down to a cuda-bindings change",
            "Cleared by"} <= set(used), used  # to check
    assert {word: urls for word, urls in used.items() if word not in glossary} == {}


#: words each page says in its own text, and so links to their glossary entries (``pages.html.linked``)
LINKED = {
    "index.html": {"Paired step", "Threshold", "Harness floor", "Over C++", "Work per call"},
    "releases.html": {"Geometric mean per library", "Work per call"},
    "regressions.html": {"Threshold", "Cleared by", "Put down to a cuda-bindings change"},
    "steps.html": {"Release ladder", "Process pair", "C++ twin"},
    f"graph.html#machine={MACHINE}&benchmark=bench_launch.Launch.time_launch": {
        "Paired chain", "Put down to a cuda-bindings change"},
}


def test_every_page_links_its_words_to_their_one_entry(site, page):
    """Each glossary word has one entry; each page links the first time it says a word to that entry (a link per
    word, to an entry that exists)."""
    html, results_dir, origin = site
    page.goto(f"{origin}/glossary.html")
    ids = page.eval_on_selector_all("dl.glossary dt", "dts => dts.map(dt => [dt.id, dt.innerText])")
    assert len({i for i, _ in ids}) == len(ids) == len({w for _, w in ids})
    entry = dict(ids)
    assert page.locator("a.word").count() == 0  # the glossary links no word to itself
    for url, expected in LINKED.items():
        page.goto(f"{origin}/{url}")
        links = page.eval_on_selector_all("a.word", "as => as.map(a => a.getAttribute('href').split('#')[1])")
        assert all(href in entry for href in links), (url, links)
        assert len(links) == len(set(links)), url  # the first saying only
        assert expected <= {entry[href] for href in links}, (url, links)


# --- one rule per word ----------------------------------------------------------------------------
def test_every_page_report_and_issue_says_one_rule_for_confirmed(site, steps, known, page,
                                                                  tmp_path):
    """The front page, Releases and Regressions say the rule of "confirmed" in the same words
    (``stats.CONFIRMED_RULE``, the rule ``stats.repeated_verdict`` applies), and so do the Markdown
    and the nightly issue. A flag on two machine starts, each with one fixed layout, reads "not yet
    confirmed" and says why beside it, next to its "2 machine starts"."""
    html, results_dir, origin = site
    rule = stats.CONFIRMED_RULE[0].upper() + stats.CONFIRMED_RULE[1:]
    for url in ("index.html", "releases.html", "regressions.html"):
        page.goto(f"{origin}/{url}")
        said = page.eval_on_selector_all(".rule", "ss => ss.map(s => s.textContent)")
        assert said == [rule], url
        assert "second boot" not in page.content(), url
    assert stats.CONFIRMED_RULE in report.issue_body({MACHINE: steps}, known=known)[0]
    assert stats.CONFIRMED_RULE in report.landing({}, [], known)
    page.goto(f"{origin}/regressions.html")
    why = page.inner_text(f"tr.case[data-case=\"{LAUNCH_16}\"][data-head='{SHA['m3']}'] .why")
    assert why == "flagged on one machine start only, not yet confirmed"
    # m2 -> m3 measured with one fixed layout per build, and flagged again so on another start
    copy = tmp_path / "results"
    shutil.copytree(results_dir, copy)
    lines = [json.loads(line) for line in (copy / MACHINE / "steps.jsonl").read_text().splitlines()]
    for record in lines:
        if (record["base"], record["head"]) == (SHA["m2"], SHA["m3"]):
            record["settings"]["layouts"] = "fixed"
    again = next(r for r in lines if (r["base"], r["head"]) == (SHA["m2"], SHA["m3"]))
    again = again | {"host": {"start": "boot-5", "boot": "2026-12-06T00:00:00Z"},
                     "date": "2026-12-06T01:00:00Z",
                     "cases": [c for c in again["cases"] if c["name"] == LAUNCH_16]}
    (copy / MACHINE / "steps.jsonl").write_text("".join(json.dumps(r) + "\n"
                                                        for r in [*lines, again]))
    fixed = history.steps(copy, MACHINE)
    case = case_of(step_of(fixed, "m2", "m3"), LAUNCH_16)
    starts = len({m["start"] for m in case["measurements"]})
    assert (summary.status(case), starts) == ("not yet confirmed", 2)
    shown = regressions_page.render_regressions(MACHINE, summary.regressions(fixed, known), known)
    row = shown.split(f'data-case="{pages_html.esc(LAUNCH_16)}" data-base="{SHA["m2"]}"', 1)[1]
    row = row.split("</tr>")[0]
    assert "<b>not yet confirmed</b>" in row and "2 machine starts" in row
    assert ("flagged on 2 machine starts, each with one layout per build (ASLR off), not yet "
            "confirmed") in row


def test_per_call_times_beside_a_ratio_are_its_own_measurements_or_say_they_disagree(site, steps,
                                                                                      known, page):
    """Beside a paired ratio, the times per call are the same measurement's medians of all samples
    (``base_ns``, ``head_ns``); where their quotient lies outside the ratio's interval
    (EventCreate('core') at m1 -> m2, make.py's MIXED), every page and report says that quotient
    beside them, and nowhere else."""
    html, results_dir, origin = site
    event = case_of(step_of(steps, "m1", "m2"), EVENT_CORE)
    assert text.per_call(event) == ("1.00 µs → 500 ns (×0.500 between these medians: outside the "
                                    "interval)")
    page.goto(f"{origin}/regressions.html")
    cells = page.eval_on_selector_all("tr.case", "trs => trs.map(tr => [tr.dataset.case, "
                                      "tr.dataset.base, tr.dataset.head, "
                                      "tr.querySelector('td.per-call').innerText])")
    for name, base, head, shown in cells:
        case = case_of(next(s for s in steps if (s["base"], s["head"]) == (base, head)), name)
        assert shown == text.per_call(case)
        assert ("outside the interval" in shown) == (case is event), name
    page.goto(f"{origin}/releases.html")
    shown = page.eval_on_selector_all("td.per-call", "tds => tds.map(td => td.innerText)")
    assert shown and not [s for s in shown if "outside" in s]
    issue = report.issue_body({MACHINE: steps}, known=known)[0]
    assert f"| {text.per_call(event)} |" in issue
    assert "medians per call, base → head" in page.content()


def test_a_flag_not_reproduced_shows_its_own_ratio_and_what_cleared_it(site, steps, known, page):
    """SetCurrent('bindings') at m2 -> m3, flagged ×1.030 [1.020, 1.040] on one start and measured
    ×1.002 [0.995, 1.009] on another: the pages show the flag it was, and beside it the measurement
    that cleared it; the paired chain goes by the latter."""
    html, results_dir, origin = site
    case = case_of(step_of(steps, "m2", "m3"), SET_BINDINGS)
    assert (case["ratio"], case["cleared_by"]["ratio"]) == (1.03, 1.002)
    page.goto(f"{origin}/regressions.html")
    row = page.locator(f"table[data-table='not reproduced'] tr.case[data-case=\"{SET_BINDINGS}\"]")
    assert float(row.get_attribute("data-ratio")) == 1.03
    said = row.inner_text()
    assert "×1.030 [1.020, 1.040]" in said
    assert "cleared by ×1.002 [0.995, 1.009] (start 2026-12-03T01:00)" in said
    page.goto(f"{origin}/steps.html")
    row = page.inner_text(f"tr.case[data-case=\"{SET_BINDINGS}\"]")
    assert "cleared by ×1.002 [0.995, 1.009]" in row
    assert "cleared by ×1.002 [0.995, 1.009]" in report.steps_markdown(MACHINE, steps)


def test_steps_and_releases_count_the_cases_on_one_side_only_alike_and_name_them(site, steps,
                                                                                  known, page):
    """v0.1.0 -> v0.2.0 measured DeviceArch('core') on the head side only (make.py's ONLY): the
    Releases page, the Steps page and both Markdown reports count it once, as ``summary.counts``
    does, and name it."""
    html, results_dir, origin = site
    step = step_of(steps, "v010", "v020")
    assert summary.counts(step)["one side"] == 1 == len(summary.one_side(step))
    listed = f"{DEVICE_ARCH}"
    page.goto(f"{origin}/releases.html")
    section = f"section.release-step[data-head='{SHA['v020']}']"
    assert "1 on one side only" in page.inner_text(f"{section} > p")
    assert page.get_attribute(f"{section} details.one-side li", "data-case") == listed
    page.goto(f"{origin}/steps.html")
    row = f"tr[data-base='{SHA['v010']}'][data-head='{SHA['v020']}']"
    assert page.inner_text(f"{row} td[data-count='one side']") == "1"
    assert page.get_attribute("tr.one-side details.one-side li", "data-case") == listed
    page.click("tr.one-side details.one-side summary")
    words = "only on the head side: cuda.core 0.1.0 has no Device.arch"
    assert words in page.inner_text("tr.one-side li")
    line = f"`{DEVICE_ARCH}` (`Device.arch`): {words}"
    assert line in report.steps_markdown(MACHINE, steps)
    released = report.releases_markdown(MACHINE, summary.releases(steps, known, SHA["m4"]), known)
    assert line in released and "1 on one side only" in released


def test_every_case_is_also_named_by_what_it_calls(site, steps, known, page):
    """Each case a page or report lists also reads as the calls a maintainer types, from the suite's
    own declaration (``Op.needs``, through ``calls.declared``): Ctrl+F for ``set_current`` finds
    SetCurrent('core')."""
    from benchmarks.bench_device import SetCurrent

    html, results_dir, origin = site
    assert calls.of(SET_CORE) == ("Device.set_current",) == tuple(
        n.split(".", 1)[1] for n in SetCurrent.needs["core"])
    assert calls.of(SET_BINDINGS) == ("cuCtxSetCurrent",)
    for url in ("index.html", "releases.html", "regressions.html", "steps.html"):
        page.goto(f"{origin}/{url}")
        rows = page.eval_on_selector_all("tr.case[data-case], ul.open li[data-case]",
                                         "es => es.map(e => [e.dataset.case, e.innerText])")
        assert rows, url
        for name, shown in rows:
            assert all(call in shown for call in calls.of(name)), (url, name, shown)
    page.goto(f"{origin}/index.html")
    assert "Device.set_current" in page.inner_text("table.overview")
    page.goto(f"{origin}/releases.html")
    assert "Device.set_current" in page.inner_text("main")
    page.goto(f"{origin}/regressions.html")
    assert "cuCtxSetCurrent" in page.inner_text("main")
    issue = report.issue_body({MACHINE: steps}, known=known)[0]
    assert f"`{EVENT_CORE}` (`Device.create_event`, `EventOptions`)" in issue


# --- the committed H200 history ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def h200(tmp_path_factory):
    yield from served(tmp_path_factory.mktemp("h200"), ROOT / "results")


def test_the_h200_history_publishes_from_results_alone(h200):
    """The committed history (no clone): main's head cb56ab9f9 against c278ecb3d (no change), the step from the
    newest release to it missing and said so, no regression open on main, each machine's release steps on the
    Releases page."""
    html, results_dir, origin = h200
    text = (html / "index.html").read_text()
    assert 'data-commit="cb56ab9f9' in text and 'data-against="release" class="missing"' in text
    assert "cuda-core-v0.5.1</a> (the newest release)" in text
    releases = (html / "releases.html").read_text()
    for tag in ("cuda-core-v0.1.0", "cuda-core-v0.1.1", "cuda-core-v0.2.0", "cuda-core-v0.3.2", "cuda-core-v0.4.2",
                "cuda-core-v0.5.1"):
        assert tag in releases
    # each machine's release steps in its own section (the H100's four: 0.1.0 -> 0.1.1 -> 0.2.0, 0.4.0 -> 0.4.1 ->
    # 0.4.2; the H200's five of its ladder)
    sections = dict(re.findall(r'data-machine="([^"]+)"(.*?)(?=data-machine="|\Z)', releases, re.S))
    assert {m: part.count('class="release-step"') for m, part in sections.items()} == {
        "nvidia-h100-80gb-hbm3": 6, "nvidia-h200": 5}


def test_readmes_numbers_are_what_the_pages_of_the_committed_history_show(h200):
    """README.md's "What the dashboard says today", as committed, against the committed history's pages in the
    browser: each machine's head and its counts against the previous measured commit (front page); the example
    operation's number per library (front page's table); the largest open slowdown with its interval (Regressions);
    the newest release step's geometric mean per library (Releases)."""
    from cuda_bench.publish import read, readme
    from cuda_bench.publish.overview import APIS, TITLES

    html, results_dir, origin = h200
    text = (ROOT / "README.md").read_text()
    said = " ".join(text[slice(*readme.bounds(text))].split())
    focus, _ = readme.focus(read.load(results_dir))
    for tab in browser_tab(origin):
        tab.goto(f"{origin}/index.html")
        for machine, head, counted in tab.eval_on_selector_all("section.machine", """ss => ss.map(s => [
                s.dataset.machine, s.querySelector('p.head').dataset.commit.slice(0, 9),
                s.querySelector('tr[data-against=previous] td:nth-child(3)').innerText.split(' (paired')[0]])"""):
            assert f"On {machine}, main's head `{head}`" in said and f": {counted};" in said, machine
        row = tab.locator(f"section[data-machine='{focus}'] tr[data-benchmark='{readme.EXAMPLE}'][data-case='']")
        for api in APIS:  # the page's leading number of each library: its time in one process, where timed so
            shown = row.locator(f"td.{api} a").inner_text().strip()
            assert f"{TITLES[api]} {shown}" in said, (api, shown)
        tab.goto(f"{origin}/regressions.html")
        largest = tab.eval_on_selector_all(
            "tr.case:not([data-status='not reproduced'])",
            "trs => trs.map(tr => [+tr.dataset.ratio, tr.cells[0].querySelector('a').innerText, "
            "tr.cells[2].innerText])")
        _, label, ratio = max(largest)
        assert f"The largest open slowdown: `{label}`" in said and ratio in said
        tab.goto(f"{origin}/releases.html")
        means = tab.eval_on_selector_all(f"section[data-machine='{focus}'] section.release-step[data-kind=release]",
                                         "ss => [...ss[0].querySelectorAll('.gm')].map(g => g.innerText)")
        assert means and " · ".join(means) in said


def test_screenshots_of_the_h200_history(h200):
    """With CUDA_BENCH_SCREENSHOTS=DIR: the landing page, a release step, the graph of README's example and the
    Regressions page of the committed history, 1400 px wide (docs/*.png, which README.md links)."""
    from cuda_bench.publish import read, readme

    folder = os.environ.get("CUDA_BENCH_SCREENSHOTS")
    if not folder:
        pytest.skip("CUDA_BENCH_SCREENSHOTS is not set")
    chromium = need_browser()
    import playwright.sync_api as playwright

    html, results_dir, origin = h200
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        tab.goto(f"{origin}/index.html")
        tab.screenshot(path=str(Path(folder) / "landing.png"))
        print("landing page words:", len(tab.inner_text("body").split()))
        tab.goto(f"{origin}/releases.html")
        tab.evaluate("() => window.scrollTo(0, document.querySelectorAll('section.release-step')[1].offsetTop - 60)")
        tab.screenshot(path=str(Path(folder) / "release-step.png"))
        # README's example operation on the machine it names (cuda_bench.publish.readme)
        tab.goto(f"{origin}/{pages_html.graph_href(readme.focus(read.load(results_dir))[0], readme.EXAMPLE)}")
        tab.wait_for_function("window.cudaBenchGraph && window.cudaBenchGraph.ready", timeout=20000)
        tab.screenshot(path=str(Path(folder) / "graph.png"))
        tab.goto(f"{origin}/regressions.html")
        tab.screenshot(path=str(Path(folder) / "regressions.png"))
        browser.close()



# --- no page scrolls sideways ---------------------------------------------------------------------------
#: what stays on one line, however narrow the window: each number, ratio with its interval, pair of times, date and
#: commit's name (of a cell, what comes before a line break of its own)
ONE_LINE = ("table.overview td[data-value]", "table.changed tr.case td:nth-child(2)",
            "table.regressions tr.case td:nth-child(3)", "td.per-call .times", "a.commit",
            "table.steps tr[data-base] > td:nth-child(2)", "#graph-commits td:nth-child(4)")
LAYOUT = """selectors => {
  const root = document.documentElement, width = root.clientWidth;
  window.scrollTo(1e6, 1e6);  // as far right and down as the page goes
  const nav = document.querySelector('nav.site').getBoundingClientRect();
  const lines = el => {
    const range = document.createRange(), br = el.querySelector(':scope > br');
    range.selectNodeContents(el);
    if (br) range.setEndBefore(br);
    return range.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight);
  };
  const found = Object.fromEntries(selectors.map(s => [s, [...document.querySelectorAll(s)]]));
  const room = el => { const box = el.closest('td, th'), style = getComputedStyle(box);
    return box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight); };
  const natural = el => { el.style.whiteSpace = 'nowrap'; const wide = el.getBoundingClientRect().width;
    el.style.whiteSpace = ''; return wide; };
  return {width, scrollWidth: root.scrollWidth, scrollX: window.scrollX,
          nav: [nav.top, nav.left, nav.right].map(Math.round),
          seen: selectors.filter(s => found[s].length),
          broken: selectors.flatMap(s => found[s].filter(el => lines(el) >= 1.5).map(el => el.innerText)),
          // a name in a table broken in two though a line of its cell would hold it whole
          needless: [...document.querySelectorAll('td code, th code')]
            .filter(el => !/\\s/.test(el.textContent) && el.getClientRects().length > 1 && natural(el) <= room(el))
            .map(el => el.textContent)};
}"""


@pytest.mark.parametrize("history", ["site", "h200"])
def test_no_page_scrolls_sideways_at_1400_or_800_px_and_the_bar_stays_put(history, request):
    """Every page of the project's (asv's own aside), on the fixture history and on the committed one, fits the
    window at 1,400 and at 800 px, and at 992 px, the narrowest at which the Regressions table keeps its seven
    columns: the document is no wider than the window and does not scroll sideways; scrolled to its end, the
    navigation bar is still on top and spans the window; words wrap, and a name in a table breaks only where its
    cell cannot hold it whole, while each number, ratio with its interval, pair of times, date and commit's name
    stays on one line (``ONE_LINE``, each found on some page)."""
    html, results_dir, origin = request.getfixturevalue(history)
    machine = MACHINE if history == "site" else "nvidia-h200"
    urls = [*OWN_PAGES[:-1], OWN_PAGES[-1].replace(MACHINE, machine)]
    found, seen = {}, set()
    for tab in browser_tab(origin):
        for width in (1400, 992, 800):
            tab.set_viewport_size({"width": width, "height": 900})
            for url in urls:
                tab.goto(f"{origin}/{url}")
                if url.startswith("graph"):
                    tab.wait_for_function(GRAPH_READY, timeout=20000)
                said = tab.evaluate(LAYOUT, list(ONE_LINE))
                seen.update(said["seen"])
                wrong = [f"{said['scrollWidth']} px wide" if said["scrollWidth"] > said["width"] else "",
                         f"scrolls {said['scrollX']} px sideways" if said["scrollX"] else "",
                         f"bar at {said['nav']}" if said["nav"] != [0, 0, said["width"]] else "",
                         f"broken over lines: {said['broken'][:3]}" if said["broken"] else "",
                         f"names broken needlessly: {said['needless'][:3]}" if said["needless"] else ""]
                if any(wrong):
                    found[f"{width} px {url.split('#')[0]}"] = [w for w in wrong if w]
    assert found == {}
    assert seen == set(ONE_LINE)

def shoot(page, name):
    folder = os.environ.get("CUDA_BENCH_SCREENSHOTS")
    if folder and os.environ.get("CUDA_BENCH_FIXTURE_SCREENSHOTS"):
        page.screenshot(path=str(Path(folder) / name))


# --- contrast -------------------------------------------------------------------------------------------------
#: every visible piece of text of a page against the background it is drawn on: [text, ratio] below 4.5:1
CONTRAST = """() => {
  const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
      .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const background = el => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c.length === 3 || c[3] > 0) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const low = [];
  const walker = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode());) {
    const el = node.parentElement, text = node.textContent.trim();
    if (!text || !el.getClientRects().length || el.closest('canvas, .flot-text')) continue;
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) low.push([text.slice(0, 40), +ratio.toFixed(2)]);
  }
  return low;
}"""


def test_text_and_flag_colours_stand_out_from_their_background_by_4_5_to_1(site, page):
    """WCAG AA: every visible piece of text on each of the project's pages (the badges and muted notes among them)
    is at least 4.5:1 against the background it is drawn on, and so is each flag marker of the graph against the
    plot's white."""
    html, results_dir, origin = site
    low = {}
    for url in OWN_PAGES:
        page.goto(f"{origin}/{url}")
        if url.startswith("graph"):
            page.wait_for_function(GRAPH_READY, timeout=20000)
            marks = page.evaluate("() => cudaBenchGraph.chain.getData().filter(s => s.cb.kind === 'flag')"
                                  ".map(s => [s.cb.verdict, s.color])")
            assert marks and all(contrast(colour) >= 4.5 for _, colour in marks), marks
        found = page.evaluate(CONTRAST)
        if found:
            low[url.split("#")[0]] = found[:5]
    assert low == {}


def contrast(colour):
    """A '#rrggbb' colour's contrast against white."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lum = sum(w * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
              for w, c in zip((0.2126, 0.7152, 0.0722), channels))
    return 1.05 / (lum + 0.05)


def test_the_graph_tip_at_the_rightmost_commit_keeps_its_width_inside_the_window(site, page):
    """Hovered at main's head, the rightmost commit, the chain's tip is as wide as its lines need (not squeezed
    into the room left of the window's edge) and lies wholly inside the window, left of the pointer."""
    html, results_dir, origin = site
    page.goto(f"{origin}/graph.html#machine={MACHINE}&benchmark=bench_event.EventCreate.time_event_create")
    page.wait_for_function(GRAPH_READY, timeout=20000)
    where = page.evaluate("""() => {
        const plot = cudaBenchGraph.chain, s = plot.getData().filter(s => s.cb.kind === 'chain' && s.cb.api === 'core')
            .flatMap(s => s.data).filter(p => p).sort((a, b) => b[0] - a[0])[0];
        const o = plot.pointOffset({x: s[0], y: s[1]}), box = $('#chain').offset();
        return [box.left + o.left - window.scrollX, box.top + o.top - window.scrollY]; }""")
    page.mouse.move(*where)
    page.wait_for_selector("#graph-tip", state="visible")
    box = page.evaluate("() => { const r = document.getElementById('graph-tip').getBoundingClientRect(); "
                        "return [r.left, r.right, r.width, innerWidth]; }")
    left, right, width, window_width = box
    assert width > 250 and right <= window_width and right <= where[0], box
