"""The published dashboard in a real browser: Debian's chromium, driven by Playwright.

The pages are published from the real results under ``results/`` (``conftest.real_results_in_a_repo``:
with ``CUDA_BENCH_REPO`` set to a cuda-python clone, as for the screenshots in docs/, or re-keyed onto a
throwaway repository in CI, every number kept).
"""

from __future__ import annotations

import functools
import http.server
import json
import math
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import ROOT, asv_conf, asv_results, real_results_in_a_repo

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
if CHROMIUM is None and not os.environ.get("CI"):  # in CI (.ci/run installs it) a missing browser fails
    pytest.skip("no chromium here (apt-get install chromium); CI installs it", allow_module_level=True)
import playwright.sync_api as playwright  # noqa: E402  (requirements-test.txt)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dashboard")
    repo, results, _ = real_results_in_a_repo(tmp)
    conf = asv_conf(tmp, repo, sys.executable, results_dir=str(results))
    subprocess.run([sys.executable, str(ROOT / "scripts" / "dashboard.py"), "publish", "--config", str(conf)],
                   check=True, capture_output=True)
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
    for machine in (p for p in results_dir.iterdir() if p.is_dir()):
        files = [p for p in machine.glob("*.json") if p.name != "machine.json"]
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


def newest_results(results_dir, machine):
    files = [p for p in (results_dir / machine).glob("*.json") if p.name != "machine.json"]
    return max(files, key=lambda p: json.loads(p.read_text())["date"])


def test_overview_shows_the_net_of_the_harness_floor_next_to_the_raw_number(published, page):
    html, results, origin = published
    sys.path.insert(0, str(ROOT / "scripts"))
    from dashboard import fmt, signed

    page.goto(f"{origin}/overview.html")
    machine = page.get_attribute("table.overview", "data-machine")
    measured = asv_results(newest_results(results, machine))
    floor = measured[("bench_harness.Floor.time_noop", ("noop",))]
    raw = measured[("bench_event.EventCreate.time_event_create", ("core",))]
    cpp = measured[("bench_cpp.Cpp.track_latency", ("event_create",))]
    td = page.locator(f"table.overview[data-machine='{machine}'] "
                      "tr[data-benchmark='bench_event.EventCreate.time_event_create'] td.core")
    assert float(td.get_attribute("data-net")) == pytest.approx(raw - floor, rel=1e-12)
    text = td.inner_text()
    assert text.startswith(f"{fmt(raw)} net {fmt(raw - floor)}"), text
    assert f"{signed(raw - floor - cpp)} / {(raw - floor) / cpp:.1f}× C++ (net)" in text, text  # vs C++: net
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


def test_regressions_page_lists_what_asv_flags(published, page):
    html, results, origin = published
    flagged = json.loads((html / "regressions.json").read_text())["regressions"]
    page.goto(f"{origin}/index.html#regressions")
    page.wait_for_selector("#regressions-body .regression-div", state="attached", timeout=20000)
    listed = page.eval_on_selector_all(
        "#regressions-body .regression-div > table:not(.ignored) > tbody > tr",
        "trs => trs.map(tr => tr.querySelector('a').textContent)",
    )
    # one row per jump (a regression may have several), each naming its benchmark and case
    assert sorted(listed) == sorted(entry[0] for entry in flagged for _jump in entry[6])
    shoot(page, "regressions.png")


def test_overview_marks_what_asv_flags(published, page):
    html, results, origin = published
    flagged = json.loads((html / "regressions.json").read_text())["regressions"]
    page.goto(f"{origin}/overview.html")
    marked = page.eval_on_selector_all(
        "td .label-danger", "spans => spans.map(s => s.closest('td').querySelector('a').getAttribute('href'))"
    )
    # the harness floor has no row (the page prints it above each machine's table)
    python_flags = [entry for entry in flagged if ".time_" in entry[0] and not entry[0].startswith("bench_harness.")]
    cpp_flags = [entry for entry in flagged if entry[0].startswith("bench_cpp.")]
    # every flagged Python case and every flagged C++ twin that has a row is marked, and nothing else
    assert len(marked) >= len(python_flags)
    for entry in python_flags:
        name, case = entry[0].split("(", 1)
        assert any(href.startswith(f"index.html#{name}?") for href in marked), entry[0]
    assert len(marked) <= len(python_flags) + len(cpp_flags) * 2


def test_no_page_loads_anything_from_outside(published):
    html, results, origin = published
    for page in html.glob("*.html"):
        text = page.read_text()
        assert "cdn" not in text.lower(), page.name
        assert 'src="http' not in text and 'href="https://cdn' not in text, page.name
