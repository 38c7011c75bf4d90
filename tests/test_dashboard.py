"""The published dashboard in a real browser: Debian's chromium, driven by Playwright.

The pages are published from the real results under ``results/`` (``conftest.real_results_in_a_repo``:
with ``CUDA_BENCH_REPO`` set to a cuda-python clone, as for the screenshots in docs/, or re-keyed onto a
throwaway repository in CI, every number kept). The history's paired steps there are the records of two real
paired runs on the H200 (an A/A and the injected slowdown of ``Device.set_current``), placed on the two
newest steps of that history: what the publisher does with steps, on real paired data.
"""

from __future__ import annotations

import functools
import http.server
import json
import math
import os
import shutil
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT, asv_conf, asv_results, real_results_in_a_repo, run_module, read_lines
from cuda_bench import history, overcpp, overview, records, report
from cuda_bench import results as results_mod
from cuda_bench.paths import machine_dirs, result_files

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
if CHROMIUM is None and not os.environ.get("CI"):  # in CI (.ci/run installs it) a missing browser fails
    pytest.skip("no chromium here (apt-get install chromium); CI installs it", allow_module_level=True)
import playwright.sync_api as playwright  # noqa: E402  (requirements-test.txt)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


SLOWED = "bench_device.SetCurrent.time_set_current('core')"
PROGRAM_OPTIONS = "bench_program.ProgramOptionsCreate.time_program_options_create('core')"


def place_steps(results):
    """The three newest steps of the history get the records of real paired runs: the H200's step that
    flagged ProgramOptionsCreate('core') on one machine start with its recheck on another (not reproduced),
    then an A/A, then the injected slowdown; returns the records."""
    machine = results / "nvidia-h200"
    commits = [json.loads(p.read_text()) for p in result_files(machine)]
    commits = [d["commit_hash"] for d in sorted(commits, key=lambda d: d["date"]) if "13.3.1" in d["env_name"]]
    recorded = read_lines(ROOT / "results" / "nvidia-h200" / "steps.jsonl")
    flagged = [r for r in recorded if (r["base"][:9], r["head"][:9]) == ("76bac4e11", "c278ecb3d")][:2]
    runs = [flagged] + [[json.loads((ROOT / "measurements" / "nvidia-h200" / run / "summary.json").read_text())]
                        for run in ("paired-aa-cb56ab9f9", "paired-injected-spin24")]
    steps = []
    for (base, head), records in zip(zip(commits[-4:], commits[-3:]), runs):
        steps += [dict(record, base=base, head=head, kind="step") for record in records]
    (machine / "steps.jsonl").write_text("".join(json.dumps(step) + "\n" for step in steps))
    return steps


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dashboard")
    repo, results, _ = real_results_in_a_repo(tmp)
    place_steps(results)
    conf = asv_conf(tmp, repo, sys.executable, results_dir=str(results))
    run_module("cuda_bench.publish", "--config", conf)
    html = tmp / "html"
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield html, results, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def page(published):
    html, results, origin = published
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.problems, page.outside = [], []
        page.on("console", lambda m: m.type == "error" and page.problems.append(m.text))
        page.on("pageerror", lambda e: page.problems.append(str(e)))
        page.on("request", lambda r: r.url.startswith(origin) or page.outside.append(r.url))
        yield page
        browser.close()
    assert page.problems == [], f"console errors: {page.problems}"
    assert page.outside == [], f"requests outside html/: {page.outside}"


def shoot(page, name):
    folder = os.environ.get("CUDA_BENCH_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / name), full_page=name.startswith("overview"))


def expected_cells(results_dir):
    """{(machine, benchmark, case, api): value} of each machine's newest results file, time_ benchmarks."""
    out = {}
    for machine in machine_dirs(results_dir):
        files = result_files(machine)
        newest = max(files, key=lambda p: json.loads(p.read_text())["date"])
        for (name, combo), value in asv_results(newest).items():
            if name.split(".")[-1].startswith("time_") and not name.startswith("bench_harness"):
                out[(machine.name, name, " ".join(combo[1:]), combo[0])] = value
    return out


def test_overview_has_a_row_per_operation_with_the_results_numbers(published, page):
    html, results, origin = published
    page.goto(f"{origin}/overview.html")
    cells = page.eval_on_selector_all(
        "table.overview td[data-value]",
        """tds => tds.map(td => [td.closest('table').dataset.machine, td.parentElement.dataset.benchmark,
                                 td.parentElement.dataset.case, td.className.split(' ')[0], td.dataset.value])""",
    )
    shown = {tuple(c[:4]): c[4] for c in cells}
    expected = expected_cells(results)
    assert {k for k in shown if k[3] != "cpp"} == set(expected)
    for key, value in expected.items():
        if value is None or math.isnan(value):
            assert shown[key] == "", key
        else:
            assert float(shown[key]) == pytest.approx(value, rel=1e-12), key
    rows = page.eval_on_selector_all("table.overview tbody tr", "trs => trs.length")
    assert rows == len({k[:3] for k in expected})
    shoot(page, "overview.png")


CPP = "bench_cpp.Cpp.track_latency"


def newest_results(results_dir, machine):
    files = result_files(results_dir / machine)
    return max(files, key=lambda p: json.loads(p.read_text())["date"])


def test_overview_shows_the_net_of_the_harness_floor_next_to_the_raw_number(published, page):
    html, results, origin = published
    from cuda_bench.text import TARGET_NS, fmt, signed

    page.goto(f"{origin}/overview.html")
    machine = page.get_attribute("table.overview", "data-machine")
    measured = asv_results(newest_results(results, machine))
    floor = measured[("bench_harness.Floor.time_noop", ("noop",))]
    raw = measured[("bench_event.EventCreate.time_event_create", ("core",))]
    cpp = measured[(CPP, ("event_create",))]
    td = page.locator(f"table.overview[data-machine='{machine}'] "
                      "tr[data-benchmark='bench_event.EventCreate.time_event_create'] td.core")
    assert float(td.get_attribute("data-net")) == pytest.approx(raw - floor, rel=1e-12)
    text = td.inner_text()
    assert text.startswith(f"{fmt(raw)} net {fmt(raw - floor)}"), text
    commit = json.loads(newest_results(results, machine).read_text())["commit_hash"]
    paired, runs = overcpp.over_cpp_cases([r for r in records.read(Path(results) / machine, "over-cpp")
                                          if r["commit"] == commit]).get(
        "bench_event.EventCreate.time_event_create('core')", (None, None))
    cpp_current = (results_mod.versions(json.loads(newest_results(results, machine).read_text()))[CPP]
                   == results_mod.suite(results)[CPP]["version"])
    spread = ""
    if paired:  # real commits (CUDA_BENCH_REPO) with an over-C++ record: the paired numbers
        diff, x, of = paired["over_ns"] * 1e-9, paired["ratio"], "paired"
        if runs and runs["runs"] > 1:  # the range over the commit's comparable runs, in the text and the title
            overview = [r for r in json.loads((html / "overview.json").read_text()) if r["machine"] == machine]
            usual = overcpp.usual_runs(overview)  # the count most ranges share: said once above the table
            if (runs["runs"], runs.get("left_out", 0)) == usual:
                spread = f" (×{runs['low']:.2f}–{runs['high']:.2f})"
                assert f"over this commit's {overcpp.usual_runs_text(usual)}" in page.inner_text("p.ranges")
            else:
                spread = f" (×{runs['low']:.2f}–{runs['high']:.2f} in {runs['runs']} runs"
                spread += f", {runs['left_out']} in the slow state left out)" if runs.get("left_out") else ")"
            assert f"over {runs['runs']} runs of this commit" in td.locator("span.target-ok, span.target-over").get_attribute("title")
    elif cpp_current:  # vs C++: the net number
        diff, x, of = raw - floor - cpp, (raw - floor) / cpp, "net"
    else:  # the twins changed after this commit's asv run: no C++ number there, and the page says why
        diff = None
        assert "C++" not in text and CPP in page.inner_text("p.older")
    if diff is not None:
        mark = "✓" if diff * 1e9 < TARGET_NS else "✗"
        assert f"{signed(diff)} ×{x:.2f}{spread} {mark} C++ ({of})" in text, text
    if cpp_current:
        assert page.inner_text(f"table.overview[data-machine='{machine}'] td.cpp >> nth=0").count("net") == 0
    assert "harness floor" in page.inner_text("body > p")

    rows = json.loads((html / "overview.json").read_text())
    for row in rows:
        for api, cell in row["cells"].items():
            if api == "cpp":
                assert "net" not in cell
            elif cell["value"] is None or math.isnan(cell["value"]):
                assert cell["net"] is None
            else:
                assert cell["net"] == pytest.approx(cell["value"] - row["floor"], rel=1e-12)
    assert {row["floor"] for row in rows if row["machine"] == machine} == {floor}


def test_every_cell_links_to_a_graph_that_draws(published, page):
    html, results, origin = published
    page.goto(f"{origin}/overview.html")
    link = page.get_attribute("tr[data-benchmark='bench_event.EventCreate.time_event_create'] td.core a", "href")
    page.goto(f"{origin}/{link}")
    page.wait_for_selector("#graph-display canvas.flot-base", timeout=20000)
    legend = page.inner_text("#graph-display")
    assert "core" in legend
    # flot drew something: the base canvas is not blank
    painted = page.evaluate("""() => { const c = document.querySelector('#graph-display canvas.flot-base');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true; return false; }""")
    assert painted
    shoot(page, "graph.png")


def test_regressions_page_lists_what_the_paired_steps_flag(published, page):
    html, results, origin = published
    flagged = json.loads((html / "regressions.json").read_text())["regressions"]
    assert [entry[0] for entry in flagged] == [SLOWED]  # the injected slowdown, nothing the A/A step measured
    ((rev_a, rev_b, before, after),) = flagged[0][6]
    step = json.loads((results / "nvidia-h200" / "steps.jsonl").read_text().splitlines()[-1])
    case = next(c for c in step["cases"] if c["name"] == SLOWED)
    assert after / before == pytest.approx(case["ratio"])  # asv's factor column shows the paired ratio
    page.goto(f"{origin}/index.html#regressions")
    page.wait_for_selector("#regressions-body .regression-div", state="attached", timeout=20000)
    listed = page.eval_on_selector_all(
        "#regressions-body .regression-div > table:not(.ignored) > tbody > tr",
        "trs => trs.map(tr => tr.querySelector('a').textContent)",
    )
    assert listed == [SLOWED]
    shoot(page, "regressions.png")


def test_overview_marks_what_the_paired_steps_flag_with_interval_and_index(published, page):
    html, results, origin = published
    page.goto(f"{origin}/overview.html")
    marked = page.eval_on_selector_all(
        "td .label-danger", "spans => spans.map(s => s.closest('td').querySelector('a').getAttribute('href'))")
    assert marked == ["index.html#bench_device.SetCurrent.time_set_current?machine=nvidia-h200&p-api=%27core%27"]
    steps = history.steps(results, "nvidia-h200")  # one per (base, head): the recheck joins its step
    ratios = [next(c["ratio"] for c in step["cases"] if c["name"] == SLOWED) for step in steps]
    td = page.locator("tr[data-benchmark='bench_device.SetCurrent.time_set_current'] td.core")
    text = td.inner_text()
    last = next(c for c in steps[-1]["cases"] if c["name"] == SLOWED)
    assert f"×{last['ratio']:.3f} [{last['low']:.3f}, {last['high']:.3f}] vs prev." in text
    assert len(steps) == 3 and f"index ×{math.prod(ratios):.3f} since {steps[0]['base'][:9]}" in text


def test_steps_page_lists_every_step_and_what_it_flagged(published, page):
    html, results, origin = published
    page.goto(f"{origin}/steps.html")
    rows = page.eval_on_selector_all("table.steps tr[data-head]", "trs => trs.map(tr => tr.dataset.head)")
    steps = history.steps(results, "nvidia-h200")
    assert rows == [step["head"] for step in reversed(steps)]
    cases = page.eval_on_selector_all("table.steps tr.case", "trs => trs.map(tr => [tr.dataset.case, "
                                      "tr.dataset.verdict, tr.innerText])")
    assert [c[:2] for c in cases] == [[SLOWED, "regression"], [PROGRAM_OPTIONS, "not reproduced"]]
    assert "flagged on one machine start only, not yet confirmed" in cases[0][2]
    assert "×1.053 [1.048, 1.056] (start not recorded)" in cases[0][2]  # a record that names no boot time
    # the flag and the measurement that did not reproduce it, each with its interval and machine start
    assert "×1.024 [1.015, 1.028] regression (start 2026-12-04T15:35)" in cases[1][2]
    assert "×0.999 [0.993, 1.004] same (start 2026-12-04T15:55)" in cases[1][2]
    text, count = report.issue_body({"nvidia-h200": steps})  # the nightly issue lists the same regressions
    assert count == 1 and f"`{SLOWED}`" in text and PROGRAM_OPTIONS not in text
    shoot(page, "steps.png")


@pytest.fixture(scope="module")
def published_history(tmp_path_factory):
    """The real results, published: main's five newest commits at the current benchmark versions."""
    tmp = tmp_path_factory.mktemp("history")
    repo, results, _ = real_results_in_a_repo(tmp)
    conf = asv_conf(tmp, repo, sys.executable, results_dir=str(results))
    run_module("cuda_bench.publish", "--config", conf)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp / "html"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield tmp / "html", results, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_graph_default_view_is_readable(published_history):
    """Commits evenly spaced (not squeezed against the right edge behind years of release tags), and the
    legend beside the plot, not over it."""
    html, results, origin = published_history
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            check_graph(browser.new_page(viewport={"width": 1400, "height": 900}), origin)
        finally:
            browser.close()


def check_graph(page, origin):
    page.goto(f"{origin}/index.html#bench_launch.Launch.time_launch?machine=nvidia-h200")
    page.wait_for_selector("#graph-display canvas.flot-base", timeout=20000)
    page.wait_for_selector("#cuda-bench-legend table", timeout=20000)
    assert "active" in page.get_attribute("#even-spacing", "class")
    plot = page.locator("#main-graph canvas.flot-base").bounding_box()
    legend = page.locator("#cuda-bench-legend table").bounding_box()
    assert legend["x"] >= plot["x"] + plot["width"] - 1  # entirely to the right of the plot
    assert page.locator("#main-graph .legend").count() == 0  # nothing drawn on the plot itself
    # the measured commits spread over the plot: every series' neighbouring points are far apart, not a pixel
    series = page.evaluate("""() => { const p = $('#main-graph').data('plot');
        return p.getData().filter(s => s.data.length > 1).map(s => s.data.map(d => p.getAxes().xaxis.p2c(d[0]))); }""")
    assert series
    everything = [x for xs in series for x in xs]
    assert max(everything) - min(everything) > 0.8 * plot["width"]
    for xs in series:
        xs = sorted(xs)
        assert min(b - a for a, b in zip(xs, xs[1:])) > 0.03 * plot["width"], xs
    shoot(page, "graph.png")


def test_no_page_loads_anything_from_outside(published):
    html, results, origin = published
    for page in html.glob("*.html"):
        text = page.read_text()
        assert "cdn" not in text.lower(), page.name
        assert 'src="http' not in text and 'href="https://cdn' not in text, page.name


def test_a_corrupt_results_file_is_skipped_with_its_name(published, tmp_path):
    """A results file cut off mid-write, JSON that is no asv results, or asv's keys holding the wrong shapes:
    publishing goes on without it, one line naming it, exit 0."""
    html, results, origin = published
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    newest = newest_results(copy, "nvidia-h200")
    bad = newest.with_name("deadbeef-" + newest.name.split("-", 1)[1])
    bad.write_text(newest.read_text()[: len(newest.read_text()) // 2])
    stray = newest.with_name("cafebabe-" + newest.name.split("-", 1)[1])
    stray.write_text('{"not": "asv"}')
    shapeless = newest.with_name("0badf00d-" + newest.name.split("-", 1)[1])  # asv's keys, not its shapes
    shapeless.write_text('{"commit_hash": "0badf00d", "result_columns": ["result"], "results": {"x": null}}')
    conf = asv_conf(tmp_path, Path(json.loads((html.parent / "asv.conf.json").read_text())["repo"]), sys.executable,
                    results_dir=str(copy))
    proc = run_module("cuda_bench.publish", "--config", conf)
    assert f"publish: skipping {bad}: not a readable results file" in proc.stderr
    assert f"publish: skipping {stray}: not a readable results file" in proc.stderr
    assert f"publish: skipping {shapeless}: not a readable results file" in proc.stderr
    stray.unlink()
    assert json.loads((tmp_path / "html" / "overview.json").read_text())  # published from the rest
    assert (tmp_path / "html" / "README.md").exists()
    only_bad = tmp_path / "only-bad"
    (only_bad / "nvidia-h200").mkdir(parents=True)
    shutil.copy2(copy / "nvidia-h200" / "machine.json", only_bad / "nvidia-h200")
    shutil.copy2(bad, only_bad / "nvidia-h200")
    proc = run_module("cuda_bench.publish", "--config", asv_conf(tmp_path, tmp_path, sys.executable,
                                                                 results_dir=str(only_bad)), check=False)
    assert proc.returncode == 1 and "publish: no results in" in proc.stderr  # nothing left: a failure


def test_a_failed_publish_keeps_the_dashboard_that_was_there(published, page, tmp_path):
    """asv publish fails (here: the project is no git repository): html/ is left as it was, README and all,
    and still serves the dashboard."""
    html, results, origin = published
    before = sorted(str(p.relative_to(html)) for p in html.rglob("*"))
    assert "README.md" in before
    broken = tmp_path / "not-a-repo"
    broken.mkdir()
    conf = asv_conf(tmp_path, broken, sys.executable, results_dir=str(results), html_dir=str(html))
    proc = run_module("cuda_bench.publish", "--config", conf, check=False)
    assert proc.returncode == 1 and proc.stderr.strip().splitlines()[-1].startswith("publish: asv publish exited")
    assert sorted(str(p.relative_to(html)) for p in html.rglob("*")) == before
    assert not list(html.parent.glob(".html-new-*"))  # the half-built folder is gone
    page.goto(f"{origin}/overview.html")
    assert page.locator("table.overview tbody tr").count() > 10


def test_the_real_history_lists_the_release_ladders_steps_after_mains(published_history):
    """The committed history published as it is: steps.html shows main's steps, then the release ladder's
    under their own heading, each flag with its standing; the Regressions page lists every confirmed or
    unconfirmed flag of both (asv lists old regressions too) and none that another start did not reproduce;
    the nightly issue about main lists only main's."""
    html, results, origin = published_history
    steps = history.steps(results, "nvidia-h200")
    ladder = [s for s in steps if history.release_step(s)]
    main = [s for s in steps if s not in ladder]
    assert len(ladder) >= 5 and main  # the ladder's five, and any a later release adds
    flagged = [(s["head"], c["name"]) for s, c in history.flagged_steps(steps)]
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{origin}/steps.html")
            heads = page.eval_on_selector_all("table.steps tr[data-head]", "trs => trs.map(tr => tr.dataset.head)")
            assert heads == [s["head"] for s in reversed(main)] + [s["head"] for s in reversed(ladder)]
            groups = page.eval_on_selector_all("table.steps tr.group", "trs => trs.map(tr => tr.innerText.trim())")
            assert groups == ["main's history", "between cuda-core releases: the release ladder's steps"]
            rows = page.eval_on_selector_all("table.steps tr.case[data-verdict='regression']",
                                             "trs => trs.map(tr => [tr.dataset.case, tr.innerText])")
            assert sorted(name for name, _ in rows) == sorted(name for _, name in flagged)
            memory = [text for name, text in rows if "MemoryResourceCreate" in name]
            assert memory and all("flagged on 2 machine starts, each with one layout per build (ASLR off), not "
                                  "yet confirmed" in text for text in memory)
            shoot(page, "steps-ladder.png")
            page.goto(f"{origin}/index.html#regressions")
            page.wait_for_selector("#regressions-body .regression-div", state="attached", timeout=20000)
            listed = page.eval_on_selector_all(
                "#regressions-body .regression-div > table:not(.ignored) > tbody > tr",
                "trs => trs.map(tr => tr.querySelector('a').textContent)")
            assert sorted(listed) == sorted(name for _, name in flagged)
        finally:
            browser.close()
    assert report.issue_body({"nvidia-h200": steps})[1] == len(history.flagged_steps(main))
