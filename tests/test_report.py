"""cuda_bench.publish.report and the overview rows behind it, on the recorded H200 results: every Python number shown
raw and net of the same run's harness floor (``bench_harness.Floor``), the C++ twins as measured, cuda.core's
overhead over C++ on the net number, and the history's paired steps (chained index, flagged steps). No
browser needed."""

from __future__ import annotations

import html
import itertools
import json
import math
import re
import shutil
import statistics

import pytest
from conftest import (
    ROOT,
    asv_results,
    over_cpp_case,
    over_cpp_record,
    paired_run,
    read_lines,
    run_module,
    step_case,
    step_record,
    write_records,
)

from cuda_bench.compare import comment, gate, overcpp, paired
from cuda_bench.foundations import stats
from cuda_bench.foundations.paths import machine_dirs, result_files
from cuda_bench.foundations.status import INCOMPLETE
from cuda_bench.foundations.text import (
    TARGET_NS,
    fmt,
    fmt_net,
    interval,
    measurements,
    number,
    signed,
    standing,
    unchanged,
)
from cuda_bench.publish import overview, read, report, summary
from cuda_bench.publish.pages import html as pages_html
from cuda_bench.publish.pages import landing as landing_page
from cuda_bench.publish.pages import steps as steps_page
from cuda_bench.results import asv_files, history, overcpp_read, records

RESULTS = ROOT / "results"
FLOOR = ("bench_harness.Floor.time_noop", ("noop",))


def newest(machine):
    """The results file of the machine's newest commit; of one commit measured in several builds, the one the pages
    show (``asv_files.one_per_commit``)."""
    shown = asv_files.one_per_commit(asv_files.load_machine(RESULTS / machine))[-1]
    return next(p for p in result_files(RESULTS / machine) if json.loads(p.read_text()) == shown)


@pytest.fixture(scope="module")
def machine():
    """The H200: the machine whose history these tests read (its ladder, its starts, its over-C++ runs)."""
    assert "nvidia-h200" in [d.name for d in machine_dirs(RESULTS)]
    return "nvidia-h200"


def suite_names():
    return {n: b.get("param_names", []) for n, b in asv_files.suite(RESULTS).items()}


def test_overview_rows_have_the_net_of_every_python_number(machine):
    rows = overview.overview_rows(asv_files.load_all(RESULTS), {}, {}, suite_names())
    assert len(rows) > 10
    measured = asv_results(newest(machine))
    floor = measured[FLOOR]
    mine = [r for r in json.loads(json.dumps(rows)) if r["machine"] == machine]
    assert mine and {r["floor"] for r in mine} == {floor}
    checked = 0
    for row in mine:
        for api, cell in row["cells"].items():
            if api == "cpp":  # timed in C++ without the harness: nothing to subtract
                assert "net" not in cell
                continue
            value = measured[(row["benchmark"], (api, *row["case"]))]
            if value is None or math.isnan(value):
                assert cell["net"] is None
                continue
            assert cell["net"] == pytest.approx(value - floor, rel=1e-12, abs=1e-18)
            if "cpp" in row["cells"]:
                assert cell["over_cpp_of"] == "net"
                assert cell["over_cpp_ns"] == pytest.approx((value - floor - row["cells"]["cpp"]["value"]) * 1e9)
            checked += 1
    assert checked > 50


def test_without_a_floor_net_is_none_and_the_cpp_comparison_is_raw(machine):
    names = suite_names()
    data = json.loads(newest(machine).read_text())
    assert "data-net=" in landing_page.render(overview.overview_rows([(machine, data)], {}, {}, names))
    del data["results"][FLOOR[0]]
    rows = overview.overview_rows([(machine, data)], {}, {}, names)
    row = next(r for r in rows if r["benchmark"] == "bench_event.EventCreate.time_event_create")
    core, cpp = row["cells"]["core"], row["cells"]["cpp"]
    assert row["floor"] is None and core["net"] is None
    assert core["over_cpp_of"] == "raw"
    assert core["over_cpp_ns"] == pytest.approx((core["value"] - cpp["value"]) * 1e9)
    page = landing_page.render(rows)
    assert "data-net" not in page and "net of the harness floor" not in page and 'class="floor">not measured' in page


def test_negative_net_is_shown_as_below_zero_not_as_a_time():
    assert fmt_net(-3e-9) == "<0"
    assert fmt_net(209e-9) == fmt(209e-9) == "209 ns"


def test_report_shows_one_number_per_cell_and_cuda_core_over_cpp_on_the_net(machine):
    """`cuda-bench report` (the front page as Markdown): per operation and library its time in one process (with
    cuda.core's ratio over cuda.bindings', paired process by process) where an over-C++ run of the commit timed it,
    then asv's median, with ▲ or ▼ only where the paired step to the commit judged the case, and each Python form
    over its C++ twin."""
    out = run_module("cuda_bench", "report").stdout
    assert out == run_module("cuda_bench", "report", "--markdown").stdout
    out = out.split(f"\n## {machine}\n", 1)[1].split("\n## ", 1)[0]  # this machine's section
    measured = asv_results(newest(machine))
    floor = measured[FLOOR]
    raw = measured[("bench_event.EventCreate.time_event_create", ("core",))]
    cpp = measured[("bench_cpp.Cpp.track_latency", ("event_create",))]
    assert f"Harness floor (what the timing loop itself costs per call): {fmt(floor)}." in out
    line = next(li for li in out.splitlines() if li.startswith("| `event.EventCreate` |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    # operation, C++, cuda.bindings, cuda.core, CuPy, cuda.core over C++, cuda.bindings over C++
    commit = json.loads(newest(machine).read_text())["commit_hash"]
    runs = [r for r in records.read(RESULTS / machine, "over-cpp") if r["commit"] == commit]
    every = records.read(RESULTS / machine, "over-cpp")
    versions = {name: b.get("version") for name, b in asv_files.suite(RESULTS).items()}
    forms = overcpp_read.forms_in_runs(runs, overcpp_read.over_cpp_cases(runs, every, versions))
    core = forms.get("bench_event.EventCreate.time_event_create('core')")
    twin = forms.get("bench_event.EventCreate.time_event_create('bindings')")
    cpp_version = asv_files.suite(RESULTS)["bench_cpp.Cpp.track_latency"]["version"]
    if asv_files.versions(json.loads(newest(machine).read_text()))["bench_cpp.Cpp.track_latency"] == cpp_version:
        # C++: no harness, no net; timed in one process beside cuda.bindings' form where an over-C++ run did
        assert cells[1] == (fmt(twin["cpp_ns"] * 1e-9) if twin else f"asv {fmt(cpp)}")  # one time per cell
    else:  # the twins changed after this commit's asv run: their numbers there are left out, and said so
        assert cells[1] == "" and "Not in the table: `bench_cpp.Cpp.track_latency`" in out
    # the paired step to the commit marks the case only when it judged it slower or faster
    step = next((s for s in history.steps(RESULTS, machine) if s["head"] == commit), None)
    case = next((c for c in (step or {}).get("cases", [])
                 if c["name"] == "bench_event.EventCreate.time_event_create('core')"), {})
    mark = {"regression": " ▲", "improvement": " ▼"}.get(case.get("verdict"))
    shown = f"{fmt(core['py_ns'] * 1e-9)} {interval(core)}" if core else f"asv {fmt(raw)}"
    assert cells[3] == shown + (f"{mark} {interval(case)}" if mark else "")
    paired = overcpp_read.over_cpp_cases([r for r in records.read(RESULTS / machine, "over-cpp")
                                     if r["commit"] == commit])
    over, runs = paired.get("bench_event.EventCreate.time_event_create('core')", (None, None))
    spread = ""
    if over:  # measured paired in one process (cuda-bench over-cpp): that is what the row shows
        diff, x = over["over_ns"] * 1e-9, over["ratio"]
        # with the times it compares: the row's other numbers are asv's, not these
        times = f"{fmt(over['py_ns'] * 1e-9)} against {fmt(over['cpp_ns'] * 1e-9)} in one process"
        spread = f" ({times})"
        if runs and runs["runs"] > 1:  # and the range over the commit's comparable runs
            assert runs["low"] <= x <= runs["high"]
            spread = f"×{runs['low']:.2f}–{runs['high']:.2f}"
            counts = runs["runs"], runs.get("left_out", 0)
            said = f"Where a range follows, it is over {overcpp_read.usual_runs_text(counts)}"
            if said not in out:  # said once, or here
                spread += f" in {runs['runs']} runs"
                if runs.get("left_out"):  # runs in the slow state, left out of the range: said
                    spread += f", {runs['left_out']} in the slow state left out"
            spread = f" ({times}; {spread})"
    else:
        diff, x = raw - floor - cpp, (raw - floor) / cpp
    assert cells[5] == f"{signed(diff)} ×{x:.2f}{spread} {'✓' if diff * 1e9 < TARGET_NS else '✗'}"


def test_paired_over_cpp_replaces_the_unpaired_difference_and_marked_rows_say_why(machine):
    names = suite_names()
    data = json.loads(newest(machine).read_text())
    case = "bench_event.EventCreate.time_event_create('core')"
    record = over_cpp_record(commit=data["commit_hash"], cases=[over_cpp_case(
        case, 1.8, twin="event_create", low=1.7, high=1.9, over_ns=1200.0, over_low=1100.0, over_high=1300.0)])
    differs = {"bench_event.EventCreate.time_event_create": "CuPy destroys the event when the object is dropped"}
    rows = overview.overview_rows([(machine, data)], {}, {}, names, {machine: [record]}, differs)
    row = next(r for r in rows if r["benchmark"] == "bench_event.EventCreate.time_event_create")
    core = row["cells"]["core"]
    assert core["over_cpp_of"] == "paired" and core["over_cpp_ns"] == 1200.0 and core["over_cpp_x"] == 1.8
    assert "over_cpp" not in row["cells"]["bindings"]  # no record for it: the unpaired difference stays
    # above the 1 us target
    assert overcpp_read.over_text(core) == "+1.20 µs ×1.80 (180 ns against 100 ns in one process) ✗"
    page = landing_page.render(rows)
    assert 'class="differs"' in page and "CuPy destroys the event" in page and "1.7" in page
    assert "processes in the fast state" not in page  # a record read over every process says nothing of it
    record["cases"][0] |= {"fast": 9, "processes": 60}  # read in the fast state: the tooltip says over how many
    page = landing_page.render(overview.overview_rows([(machine, data)], {}, {}, names, {machine: [record]}, differs))
    assert "paired in one process, over the 9 of 60 processes in the fast state: ×1.70–1.90" in page
    assert "slow state" not in page
    fast = {"twins": "3245fe7f3c6c087e", "settings": {"layouts": "fixed", "state": "fast", "processes": 60}}
    # a newer run whose twins ran 1.6x slower
    quick, slow = ({**record, **fast, "cases": [{**record["cases"][0], "cpp_ns": t, "ratio": t / 25}]}
                   for t in (50.0, 80.0))
    rows = overview.overview_rows([(machine, data)], {}, {}, names, {machine: [quick, slow]}, differs)
    page = landing_page.render(rows)
    assert "⚠ slow state" not in page  # the older, quick run's
    assert "×2.00 (180 ns against 50 ns in one process; 1 in the slow state left out)" in page
    assert "1 run(s) in the slow state left out" in page
    # where no run out of that state measured the case, the slow run's is shown, marked: here the quick run
    # measured another case only (the slow run is x1.6 slower on it, x1.0 on its own case: x1.3)
    other = {**record["cases"][0], "name": "bench_x.X.time_x('core')"}
    slow = {**slow, "cases": [*slow["cases"], {**other, "cpp_ns": 80.0}]}
    quick_other = {**quick, "cases": [{**other, "cpp_ns": 50.0}]}
    page = landing_page.render(overview.overview_rows([(machine, data)], {}, {}, names, {machine: [quick_other, slow]},
                                                 differs))
    assert "⚠ slow state" in page and "its C++ twins ran ×1.300 slower than their fastest recorded run" in page
    # a commit measured once is judged against the machine's runs of other commits: the twins do not change
    elsewhere = {**quick, "commit": "0" * 40}
    alone = {**slow, "cases": slow["cases"][:1]}  # the only run of this commit
    page = landing_page.render(overview.overview_rows([(machine, data)], {}, {}, names, {machine: [elsewhere, alone]},
                                                 differs))
    assert "⚠ slow state" in page and "its C++ twins ran ×1.600 slower than their fastest recorded run" in page
    text = report.markdown([r for r in rows if r["machine"] == machine])
    assert "`event.EventCreate` ★" in text and "★ `event.EventCreate`: CuPy destroys" in text


def test_every_number_a_cell_shows_is_the_one_its_hover_explains():
    """The H200 head's Launch('bindings', '512 int'): the cell holds one time, its time in one process, and its
    hover's first line names the over-C++ run it comes from (date and time, and that run's build); the cost over
    C++ in that line is of the same run (its Python time is the cell's); asv's median is not in the cell but in
    the hover, named by asv's run and build and said to be unpaired context. In the Markdown, the same time."""
    machine = "nvidia-h200"
    runs = asv_files.load_all(RESULTS)
    names = suite_names()
    rows = overview.overview_rows(runs, {}, asv_files.commits(RESULTS), names,
                                  {machine: records.read(RESULTS / machine, "over-cpp")})
    row = next(r for r in rows if r["machine"] == machine
               and r["benchmark"] == "bench_launch.Launch.time_launch" and r["case"] == ["512 int"])
    cell = row["cells"]["bindings"]
    over, one = cell["over_cpp"], cell["one_process"]
    assert over["py_ns"] == one["py_ns"] and over["cpp_ns"] == one["cpp_ns"]  # one run
    page = landing_page.render([r for r in rows if r["machine"] == machine])
    found = re.search(r'<td class="bindings[^"]*" data-value="' + re.escape(repr(cell["value"])) +
                      r'"[^>]*title="([^"]*)"><a[^>]*>([^<]*)</a>(.*?)</td>', page)
    title, shown, rest = html.unescape(found.group(1)), found.group(2), found.group(3)
    assert shown == fmt(one["py_ns"] * 1e-9) and fmt(cell["value"]) not in rest  # one time in the cell
    run = f"the over-C++ run of {one['record']['date'][:16].replace('T', ' ')} UTC"
    assert title.startswith(f"In {run} (cuda-bindings {one['record']['bindings']}): {shown} per call in one "
                            "process")
    first = title.splitlines()[0]
    assert f"{fmt(over['py_ns'] * 1e-9)} against {fmt(over['cpp_ns'] * 1e-9)} in one process" in first
    asv = next(line for line in title.splitlines() if line.startswith("asv's median"))
    assert asv.startswith(f"asv's median in asv's run of {row['commit'][:9]} (cuda-bindings {row['build']}")
    assert f"{fmt(cell['value'])} per call" in asv and asv.endswith("unpaired, context")
    line = next(li for li in report.markdown([r for r in rows if r["machine"] == machine]).splitlines()
                if li.startswith("| `launch.Launch` 512 int |"))
    assert line.split("|")[3].strip() == shown


def test_across_releases_has_one_column_per_commit_and_says_failed_or_skipped(tmp_path):
    """The release-ladder table (`cuda-bench report --across`) on the committed H200 ladder: cuda-core 0.1.0's
    launches measured (0.1.0 runs with the cuda-python metapackage), TensorMap skipped before it existed; and a
    case asv recorded as failed (a null result) says so."""
    def across(results):
        proc = run_module("cuda_bench", "report", "--results", results, "--across", "v0.1.0=72acaaf0",
                          "v0.5.1=73f808a6")
        lines = proc.stdout.splitlines()
        assert lines[0] == "| operation | case | v0.1.0 | v0.5.1 |"
        launch = next(line for line in lines if line.startswith("| `launch.Launch` | none |"))
        tensormap = next(line for line in lines if line.startswith("| `tensormap.TensorMapEncodeTiled`"))
        assert tensormap.split("|")[3].strip() == "skipped"
        return launch.split("|")[3].strip(), launch.split("|")[4].strip()

    v010, v051 = across(RESULTS)
    assert v010.endswith("µs") and v051.endswith("µs")

    folder = tmp_path / "results" / "nvidia-h200"
    folder.mkdir(parents=True)
    shutil.copy2(RESULTS / "benchmarks.json", tmp_path / "results")
    for path in (RESULTS / "nvidia-h200").glob("*.json"):
        if path.name == "machine.json" or path.name[:8] in ("72acaaf0", "73f808a6"):
            shutil.copy2(path, folder)
    old = next(folder.glob("72acaaf0*.json"))
    data = json.loads(old.read_text())
    row = data["results"]["bench_launch.Launch.time_launch"]
    cases = list(itertools.product(*row[1]))
    row[0][cases.index(("'core'", "'none'"))] = None  # what asv writes for a case that raised
    old.write_text(json.dumps(data))
    assert across(tmp_path / "results")[0] == "failed"


def test_gpu_machines_lead_the_overview(machine):
    """A machine without a GPU (a run that someone forced into the history) comes after the GPU machines."""
    data = json.loads(newest(machine).read_text())
    cpu = json.loads(json.dumps(data))
    cpu["params"] = {k: v for k, v in cpu["params"].items() if not k.startswith("gpu")}
    rows = overview.overview_rows([("aaa-cpu", cpu), (machine, data)], {}, {}, suite_names())
    order = list(dict.fromkeys(r["machine"] for r in rows))
    assert order == [machine, "aaa-cpu"] and rows[0]["gpu"] and not rows[-1]["gpu"]


def test_chained_index_is_the_product_of_the_paired_ratios():
    case = "bench_device.SetCurrent.time_set_current('core')"
    steps = [step_record(base="a", head="b", cases=[{"name": case, "ratio": 1.1, "low": 1.0, "high": 1.2,
                                                     "verdict": "same"}]),
             step_record(base="b", head="c", cases=[{"name": case, "ratio": 0.5, "low": 0.4, "high": 0.6,
                                                     "verdict": "regression"}]),
             step_record(base="x", head="y", cases=[])]
    chains = history.chains(steps, ["a", "b", "c", "x", "y"])
    assert chains[case]["13.3.1 wheel"]["c"] == (pytest.approx(0.55), pytest.approx(0.4), pytest.approx(0.72),
                                                 "a", 2)
    assert "bench_x.Other.time_other('core')" not in chains  # not measured on the way


def test_no_cell_holds_a_difference_of_medians_between_commits(machine):
    """Only a paired step says what changed: a commit before the newest, measured twice as slow, changes no cell of
    the rows (no unpaired "vs previous commit" or "vs release"), nor the page, nor the Markdown."""
    names = suite_names()
    newest_data = json.loads(newest(machine).read_text())
    alone = overview.overview_rows([(machine, newest_data)], {}, {}, names)
    older = json.loads(newest(machine).read_text())
    older["commit_hash"] = "0" * 40
    for row in older["results"].values():
        row[0] = [v * 2 if isinstance(v, float) else v for v in row[0]] if isinstance(row[0], list) else row[0]
    rows = overview.overview_rows([(machine, older), (machine, newest_data)], {}, {}, names)
    assert rows == alone
    assert not any(key.startswith("vs_") for r in rows for c in r["cells"].values() for key in c)
    assert landing_page.render(rows) == landing_page.render(alone) and report.markdown(rows) == report.markdown(alone)


def auto_env(name):
    """An asv environment or file name with cuda-bindings ``auto`` in place of whatever it names."""
    return re.sub(r"BINDINGS[^-.]+(?:\.[0-9]+)*", "BINDINGSauto", name)


def in_auto_env(path, hours=0.0, scale=1.0):
    """A results file as the same commit measured in cuda-bindings ``auto``'s environment: started ``hours``
    after the recorded run, every median times ``scale``."""
    data = json.loads(path.read_text())
    data["env_name"] = auto_env(data["env_name"])
    data["env_vars"] = (data.get("env_vars") or {}) | {"CUDA_BENCH_BINDINGS": "auto"}
    started, result = (data["result_columns"].index(c) for c in ("started_at", "result"))
    for row in data["results"].values():
        row[started] = (row[started] or 0) + int(hours * 3_600_000)
        row[result] = [v * scale if isinstance(v, float) else v for v in row[result]] \
            if isinstance(row[result], list) else row[result]
    return data


def test_a_commit_measured_in_several_builds_shows_its_own_build_else_the_one_measured_last(machine, tmp_path):
    """A ladder (cuda-bindings auto) and a run (13.3.1) of the same main head give that commit several results
    files: the pages show one of them (``read.load``: ``asv_files.one_per_commit``), whatever asv's file names: the
    build of the commit's own cuda_bindings where there is one, however old, else the one measured last."""
    folder = tmp_path / machine
    shutil.copytree(RESULTS / machine, folder)
    head = newest(machine)
    assert asv_files.bindings_of(json.loads(head.read_text())) == "source"
    expected = [r for r in read.load(RESULTS).rows if r["machine"] == machine]

    def values(rows):
        return [c["value"] for r in rows for c in r["cells"].values()]

    def shown():
        return [r for r in read.load(tmp_path).rows if r["machine"] == machine]

    def write(data):
        (folder / auto_env(head.name)).write_text(json.dumps(data))

    write(in_auto_env(head, hours=1, scale=3.0))  # a wheel's build, measured an hour after the commit's own
    for name in ("benchmarks.json", "commits.json"):
        (tmp_path / name).write_text((RESULTS / name).read_text())
    assert {r["commit"] for r in shown()} == {json.loads(head.read_text())["commit_hash"]}
    assert values(shown()) == values(expected)  # the commit's own build's numbers
    head_of = {json.loads(p.read_text())["env_name"]: p for p in result_files(folder)
               if p.name.startswith(head.name[:8])}
    for env, path in head_of.items():  # without the commit's own build: of the wheels, the one measured last
        if "BINDINGSsource" in env:
            path.unlink()
    rows = shown()
    moved = [(v, e) for v, e in zip(values(rows), values(expected), strict=True) if number(v) and number(e)]
    assert len(moved) > 50 and all(v == pytest.approx(3 * e) for v, e in moved)


def test_numbers_of_an_earlier_benchmark_version_are_left_out_and_named(machine):
    """A benchmark that changed after the newest commit was measured (another version in asv's
    benchmarks.json) measured something else there: the overview leaves its numbers out and says which."""
    data = json.loads(newest(machine).read_text())
    names = suite_names()
    measured_as = asv_files.versions(data)
    same = overview.overview_rows([(machine, data)], {}, {}, names, versions=measured_as)
    assert same[0]["older"] == [] and any("cpp" in r["cells"] for r in same)
    changed = dict(measured_as, **{"bench_cpp.Cpp.track_latency": "changed",
                                   "bench_device.SetCurrent.time_set_current": "changed"})
    rows = overview.overview_rows([(machine, data)], {}, {}, names, versions=changed)
    assert rows[0]["older"] == ["bench_cpp.Cpp.track_latency", "bench_device.SetCurrent.time_set_current"]
    assert not any("cpp" in r["cells"] for r in rows)
    assert "bench_device.SetCurrent.time_set_current" not in {r["benchmark"] for r in rows}
    assert len(rows) == len(same) - 1
    assert "Not in the table: `bench_cpp.Cpp.track_latency`" in report.markdown(rows)
    assert 'class="older"' in landing_page.render(rows)


def test_over_cpp_runs_agree_when_ratios_are_within_5_percent_either_way(tmp_path):
    """overcpp_read.agreement: a case agrees when the two ratios are within 5% of each other, whichever run is
    first (1.00 vs 1.049 agrees; 1.00 vs 1.06 and 1.00 vs 0.95 do not); cases one run lacks or that are
    left out do not count."""
    def record(out, ratios, **more):
        return over_cpp_record(command=f"cuda-bench over-cpp main --out m/{out}", **more,
                               cases=[over_cpp_case(f"bench_x.X.time_x('{k}')", r) for k, r in ratios.items()])

    a = record("run-a", {"p": 1.0, "q": 1.0, "r": 1.0, "s": 1.0, "only_a": 1.0})
    b = record("run-b", {"p": 1.049, "q": 1.06, "r": 0.95, "s": 1.0})
    (pair,) = overcpp_read.agreement([a, b])
    assert (pair["a"], pair["b"], pair["cases"], pair["agree"]) == ("run-a", "run-b", 4, 2)
    assert pair["furthest"][0] == ("bench_x.X.time_x('q')", pytest.approx(0.06))
    assert overcpp_read.agreement([b, a])[0]["agree"] == 2  # symmetric
    assert overcpp_read.agreement([a, b], leave_out={"bench_x.X.time_x('q')"})[0]["cases"] == 3
    assert "| run-a | run-b | ? | same | 4 | **2 (50%)** |" in overcpp_read.agreement_markdown([pair])

    machine_dir = tmp_path / "m1"
    machine_dir.mkdir()
    (machine_dir / "machine.json").write_text(json.dumps({"machine": "m1", "version": 1}))
    write_records(machine_dir, "over-cpp", [a, b])
    shutil.copy2(RESULTS / "benchmarks.json", tmp_path / "benchmarks.json")
    out = run_module("cuda_bench", "report", "--results", tmp_path, "--agreement").stdout
    assert "2 runs" in out and "| run-a | run-b | ? | same | 4 | **2 (50%)** |" in out

    # runs of other twins or another layout mode are compared among themselves, not with these
    random = {"layouts": "random", "state": "all", "processes": 60}
    c = record("run-c", {"p": 1.0}, twins="t1", settings=random)
    d = record("run-d", {"p": 1.0}, twins="t1", settings=random)
    e = record("run-e", {"p": 1.0}, twins="t2", settings=random)
    write_records(machine_dir, "over-cpp", [a, b, c, d, e])
    out = run_module("cuda_bench", "report", "--results", tmp_path, "--agreement").stdout
    assert "2 runs (records that do not say which twins they timed)" in out
    assert "2 runs (twins t1, random layouts, ratios over all processes)" in out and "| run-c | run-d |" in out
    assert "run-e" not in out and "| run-a | run-c |" not in out  # alone of its kind: no pair


def test_agreement_counts_the_cases_whose_cpp_twin_moved_beside_the_others():
    """The twins' own A/A: between two runs every C++ twin moves with the state (here x1.3), so a twin that
    moves more than 5% beside that (x1.5) moved with the machine, and its case's ratio with it; the pair
    counts it in ``twins_moved`` and counts the same ratios again over the other cases."""
    def record(out, rows):
        return over_cpp_record(command=f"cuda-bench over-cpp main --out m/{out}", cases=[
            over_cpp_case(f"bench_x.X.time_x('{k}')", r, cpp_ns=c) for k, (r, c) in rows.items()])

    a = record("a", {"p": (2.0, 100), "q": (2.0, 100), "r": (2.0, 100), "s": (2.0, 100), "t": (2.0, 100)})
    b = record("b", {"p": (2.0, 130), "q": (2.0, 131), "r": (2.2, 130), "s": (1.5, 150), "t": (2.0, 0)})
    (pair,) = overcpp_read.agreement([a, b])
    assert (pair["cases"], pair["agree"], pair["twins_moved"], pair["still_agree"]) == (5, 3, 1, 3)
    # r's twin held still and its ratio moved 10%: counted against the pair; s's twin moved: set apart
    text = overcpp_read.agreement_markdown([pair])
    assert "| a | b | ? | same | 5 | **3 (60%)** | 1 | 3 (75%) |" in text
    assert "on the cases whose C++ twin did not move beside the others, 0 of 1 (from 75% to 75%)" in text
    lone = overcpp_read.agreement([record("c", {"p": (2.0, 0)}), record("d", {"p": (2.0, 0)})])[0]
    assert (lone["twins_moved"], lone["still_agree"]) == (0, 1)  # no twin times: nothing set apart


def test_agreement_says_which_pairs_ran_on_one_machine_start_and_on_different_days():
    """Two records with one ``host.start`` ran on one machine start; the summary counts the pairs that reach
    90% separately on one start, across starts, and where a record does not say its start; and the pairs
    whose records are dated on different days (UTC), the issue's test."""
    def record(out, start, ratios):
        return over_cpp_record(command=f"cuda-bench over-cpp main --out m/{out}",
                               date=(start or "2026-12-04T09:00:00Z")[:10] + "T13:00:00Z",
                               host={"start": start, "boot": start},
                               cases=[over_cpp_case(f"bench_x.X.time_x({i})", r) for i, r in enumerate(ratios)])

    ten = [1.0] * 10
    a = record("a", "2026-12-03T10:00:00Z", ten)
    b = record("b", "2026-12-03T10:00:00Z", [1.01] * 10)  # same start: 10 of 10
    c = record("c", "2026-12-03T12:00:00Z", [1.1] + [1.0] * 9)  # another start: 9 of 10 against a
    d = record("d", None, ten)
    pairs = {(p["a"], p["b"]): p for p in overcpp_read.agreement([a, b, c, d])}
    assert [pairs[k]["same_start"] for k in (("a", "b"), ("a", "c"), ("b", "c"), ("a", "d"))] == [
        True, False, False, None]
    text = overcpp_read.agreement_markdown(list(pairs.values()))
    assert "| a | b | same | same | 10 | **10 (100%)** |" in text
    assert "| a | c | different | same | 10 | **9 (90%)** |" in text and "| a | d | ? | different | 10 |" in text
    assert "- on one machine start: 1 of 1 pairs agree on at least 90% of the cases (from 100% to 100%)" in text
    # b and c: 1.1 against 1.01 is 8.9% apart, the other nine 1%: 9 of 10
    assert "- across machine starts: 2 of 2 pairs" in text
    assert "- where a record does not say its machine start: 3 of 3 pairs" in text
    assert "- on different days: 3 of 3 pairs" in text  # d is dated a day after a, b and c


def test_over_cpp_compares_a_case_only_across_runs_of_the_same_timed_work():
    """A benchmark whose Python form changed (a new asv version) while its C++ twin did not: its over-C++
    ratios under the old version neither join the new one's range, nor the pairs of --agreement, nor are shown
    once the suite has moved on; records that name no version (older than the twins' version) match only each
    other."""
    def record(ratio, version, start="b1"):
        return over_cpp_record(commit="c1", twins="t1", host={"start": start, "boot": None},
                               date="2026-12-05T00:00:00Z",
                               cases=[over_cpp_case("bench_x.X.time_x('core')", ratio, cpp_ns=10.0, version=version)])

    old, older, new, newer = record(3.0, "v1"), record(2.9, "v1"), record(2.0, "v2", start="b2"), record(2.2, "v2")
    x = "bench_x.X.time_x('core')"
    picked, spread = overcpp_read.over_cpp_cases([old, older, new, newer])[x]
    assert picked is newer["cases"][0] and (spread["low"], spread["high"], spread["runs"]) == (2.0, 2.2, 2)
    assert [p["cases"] for p in overcpp_read.agreement([old, new, older])] == [0, 1, 0]
    assert [p["cases"] for p in overcpp_read.agreement([record(1.0, None), record(1.1, None), new])] == [1, 0, 0]
    assert overcpp_read.over_cpp_cases([old], versions={"bench_x.X.time_x": "v2"}) == {}
    assert overcpp_read.over_cpp_cases([old], versions={"bench_x.X.time_x": "v1"})[x][0] is old["cases"][0]
    assert overcpp_read.over_cpp_cases([old], versions={"bench_y.Y.time_y": "v9"})[x][0] is old["cases"][0]


def test_every_recorded_over_cpp_run_of_named_twins_names_its_cases_versions(machine):
    """The history's over-C++ records that name their twins name each case's benchmark version too (stamped as
    they are made; those made before the field, all with twins 3245fe7f3c6c087e, carry the versions their code
    had: docs/measurement.md), so a changed benchmark's older ratios are never mixed in."""
    named = [r for r in records.read(RESULTS / machine, "over-cpp") if r["twins"]]
    assert named and all(c["version"] for r in named for c in r["cases"])


def test_a_run_is_judged_slow_on_every_twin_whatever_the_python_versions():
    """The slow state is read on the C++ twins, which do not depend on the Python forms: a case left out of the
    overview for an older benchmark version still counts in its run's slow-state factor."""
    def record(x_cpp, start):
        return over_cpp_record(commit="c1", twins="t1", host={"start": start, "boot": None},
                               settings={"layouts": "fixed", "state": "fast", "processes": 60},
                               cases=[over_cpp_case("bench_x.X.time_x('core')", 2.0, cpp_ns=x_cpp, version="old"),
                                      over_cpp_case("bench_y.Y.time_y('core')", 3.0, cpp_ns=10.0, version="new")])

    fast, slow = record(10.0, "b1"), record(30.0, "b2")  # the second run's twins: ×3 and ×1, median ×2
    y = "bench_y.Y.time_y('core')"
    picked, spread = overcpp_read.over_cpp_cases([fast, slow], versions={"bench_x.X.time_x": "new",
                                                                   "bench_y.Y.time_y": "new"})[y]
    assert picked is fast["cases"][1] and spread["left_out"] == 1 and spread["runs"] == 1


def test_an_over_cpp_record_names_the_version_of_each_case():
    from benchmarks import bench_launch
    from cuda_bench.foundations.paths import BENCHMARKS

    cases = [{"name": "bench_launch.Launch.time_launch('core', '2 ptr')"}, {"name": "bench_gone.X.time_x('core')"}]
    assert [c["version"] for c in overcpp.stamp_versions(cases, BENCHMARKS)] == [bench_launch.Launch.version, None]


def test_the_recorded_h200_runs_of_one_call_agree_on_every_case(machine):
    """Known answers on the H200's over-C++ runs of main (cb56ab9f9) in results/: two runs made one after the
    other in one device call (21:11 and 21:13 UTC on 2026-12-03) agree on all 91 cases; two made in two calls
    (18:35 and 18:45), on 81."""
    runs = {r["date"][:16]: r for r in records.read(RESULTS / machine, "over-cpp")
            if r["commit"].startswith("cb56ab9f9")}
    one_call = [runs[f"2026-12-03T{time}"] for time in ("21:11", "21:13")]
    two_calls = [runs[f"2026-12-03T{time}"] for time in ("18:35", "18:45")]
    assert [(p["cases"], p["agree"]) for p in overcpp_read.agreement(one_call)] == [(91, 91)]
    assert [(p["cases"], p["agree"]) for p in overcpp_read.agreement(two_calls)] == [(91, 81)]


def test_over_cpp_spread_counts_only_runs_of_the_same_twins_timed_the_same_way():
    """overcpp_read.over_cpp_cases (the records of one commit): per case the newest measurement, and the range of
    its ratio over the runs of that record's twins version and layouts; a run of other twins, of random
    layouts or without the field stays out of the range. A newer run of fewer cases (-b) hides no other
    case. The overview prints the range beside the newest ratio."""
    def record(ratio, twins="t1", layouts="fixed", start="b1", case="x"):
        return over_cpp_record(commit="c1", twins=twins, settings={"layouts": layouts, "state": "all", "processes": 60},
                               host={"start": start, "boot": None},
                               cases=[over_cpp_case(f"bench_x.X.time_x('{case}')", ratio)])

    newest = record(2.0, start="b2")
    found = [record(1.8), record(2.4, twins="t0"), record(3.0, layouts="random"),
             {**record(5.0), "twins": None}, record(2.1), newest]
    x = "bench_x.X.time_x('x')"
    each = [[r["host"]["start"], c["over_low"], c["over_high"], c["coverage"]]
            for r in (newest, found[4], found[0]) for c in r["cases"]]  # each run's interval, newest first
    spread = {"low": 1.8, "high": 2.1, "runs": 3, "starts": 2, "each": each}
    assert overcpp_read.over_cpp_cases(found) == {x: (newest["cases"][0], spread)}
    unknown = {**newest, "twins": None}
    assert overcpp_read.over_cpp_cases([*found[:-1], unknown])[x] == (unknown["cases"][0], None)  # no range
    partial = record(7.0, case="y")  # a newer run of another case only
    assert overcpp_read.over_cpp_cases([*found, partial])[x][0] is newest["cases"][0]
    cell = {"over_cpp_ns": 100.0, "over_cpp_x": 2.0,
            "over_cpp": {"runs": {"low": 1.8, "high": 2.1, "runs": 3, "starts": 2}}}
    assert overcpp_read.over_text(cell) == "+100 ns ×2.00 (×1.80–2.10 in 3 runs) ✓"
    # a table names the count most of its ranges share once (usual_runs); those cells then give the range alone
    other = {**cell, "over_cpp": {"runs": {"low": 1.5, "high": 1.6, "runs": 2, "starts": 1, "left_out": 1}}}
    rows = [{"cells": {"core": cell, "bindings": cell}}, {"cells": {"core": other, "cpp": {"value": 1e-8}}}]
    assert overcpp_read.usual_runs(rows) == (3, 0) and overcpp_read.usual_runs_text((3, 0)) == "3 runs"
    assert overcpp_read.over_text(cell, (3, 0)) == "+100 ns ×2.00 (×1.80–2.10) ✓"
    assert overcpp_read.over_text(other, (3, 0)) == \
        "+100 ns ×2.00 (×1.50–1.60 in 2 runs, 1 in the slow state left out) ✓"
    assert overcpp_read.usual_runs_text((2, 1)) == "2 runs (1 more, in the slow state, left out)"
    assert overcpp_read.usual_runs([{"cells": {"core": {"over_cpp_ns": 5.0, "over_cpp_x": 1.1}}}]) is None  # one run


def at(time):
    """A moment on 2026-12-04 (UTC), the day the H200 made most of the history in results/: ``at("10:00")``.
    The history as it stood then gives the known answers of that moment, whatever was recorded later."""
    return f"2026-12-04T{time}"


def fast_state_runs(machine, since="", until="~"):
    """The H200's over-C++ runs at cb56ab9f9 that read each ratio in the fast state (every run from 04:00 UTC on
    2026-12-04), dated from ``since`` to before ``until``."""
    return [r for r in records.read(RESULTS / machine, "over-cpp")
            if r["commit"].startswith("cb56ab9f9") and overcpp_read.fast_kind(overcpp_read.run_kind(r))
            and since <= r["date"] < until]


def first_fast_runs(machine):
    """The first eight runs read in the fast state: two on each of four machine starts, 04:00 to 05:00 UTC."""
    return fast_state_runs(machine, at("04:00"), at("05:00"))


def test_the_overview_at_main_spreads_over_the_recorded_runs_of_todays_twins(machine):
    """Known answers on the H200's over-C++ runs at cb56ab9f9 as the history stood at 10:00 UTC: the newest
    records read each ratio in the fast state, so each case's range is over the runs read that way (sixteen, on
    eight machine starts from 04:00), not over the older runs read over every process nor the random-layout
    ones. The number shown is the run nearest the fast state (the one of 04:42, whose twins ran fastest: x1.00).
    The two runs of the start booted at 08:37 are in the slow state, so the range leaves them out: fourteen
    runs on seven starts. Over those, 73 of the 91 cases stay within 5% from lowest to highest (86 over the
    first eight runs alone; two later starts move launches with arguments by 4-9%)."""
    found = [r for r in records.read(RESULTS / machine, "over-cpp")
             if r["commit"].startswith("cb56ab9f9") and r["date"] < at("10:00")]
    cases = overcpp_read.over_cpp_cases(found)
    assert {(s["runs"], s["starts"], s["left_out"]) for _, s in cases.values()} == {(14, 7, 2)}
    assert sum(s["high"] / s["low"] - 1 <= overcpp_read.AGREE for _, s in cases.values()) == 73
    first = overcpp_read.over_cpp_cases(first_fast_runs(machine))
    assert sum(s["high"] / s["low"] - 1 <= overcpp_read.AGREE for _, s in first.values()) == 86
    (nearest,) = [r for r in found if r["date"] == at("04:42:55Z")]
    assert all(case in nearest["cases"] for case, _ in cases.values())
    assert {s["slower"] for _, s in cases.values()} == {1.0}
    case, spread = cases["bench_device.SetCurrent.time_set_current('core')"]
    assert spread["low"] <= case["ratio"] <= spread["high"]


def test_over_cpp_in_the_fast_state_agrees_across_the_h200s_runs_of_main(machine):
    """Known answers on the H200's first eight over-C++ runs of main read in the fast state (four machine starts
    between 04:00 and 05:00 UTC): they agree with each other, every pair, on at least 90% of the cases within 5%
    (the A/A side); the same runs read over every process reach 90% in 7 of the 28 pairs. Each stored ratio is
    stats.fast_state's reading of the record's own processes."""
    found = first_fast_runs(machine)
    assert len(found) == 8 and len({r["host"]["start"] for r in found}) == 4
    for record in found:  # each stored ratio is stats.fast_state's reading of the record's own processes
        for c in record["cases"]:
            fast = stats.fast_state(c["process_py_ns"])
            assert statistics.median(c["process_ratios"][i] for i in fast) == pytest.approx(c["ratio"], rel=1e-3)
    pairs = overcpp_read.agreement(found)
    assert len(pairs) == 28 and all(p["cases"] == 91 and p["agree"] >= overcpp_read.SHARE * 91 for p in pairs)
    # the same eight runs read over every process: 7 of the 28 pairs reach 90%
    every = [{**r, "cases": [{**c, "ratio": c["all"]["ratio"]} for c in r["cases"]]} for r in found]
    assert sum(p["agree"] >= overcpp_read.SHARE * p["cases"] for p in overcpp_read.agreement(every)) == 7


def test_a_run_with_no_process_in_the_fast_state_is_marked_and_left_out(machine):
    """Known answer on the first eight fast-state runs at cb56ab9f9: each one, taken as the newest, ran its C++
    twins at most 1.14x slower than the fastest run (no mark). A run made of each real run's processes that were
    not in the fast state (read in the fast state among those alone: what a run with no fast process records;
    its C++ times from each process's Python time over its ratio) reads its ratios high on 34-60 of 91 cases,
    and all 8 such runs are marked and left out of the overview (x1.15-1.42 slower; on the Python side
    x1.17-1.62). The next test has real ones."""
    found = first_fast_runs(machine)
    assert len(found) == 8

    def marked(runs):  # the newest run taken for one in the slow state: left out of every case
        left_out = {spread.get("left_out", 0) for _, spread in overcpp_read.over_cpp_cases(runs).values()}
        assert len(left_out) == 1  # the mark belongs to the run: on every case or on none
        return left_out.pop() == 1

    flagged = 0
    for k, real in enumerate(found):
        others = found[:k] + found[k + 1:]
        assert not marked([*others, real])
        cases = []
        for c in real["cases"]:
            fast = set(stats.fast_state(c["process_py_ns"]))
            rest = [i for i in range(len(c["process_py_ns"])) if i not in fast]
            chosen = [rest[j] for j in stats.fast_state([c["process_py_ns"][i] for i in rest])]
            cases.append({**c, "ratio": statistics.median(c["process_ratios"][i] for i in chosen),
                          "py_ns": statistics.median(c["process_py_ns"][i] for i in chosen),  # C++: Python / ratio
                          "cpp_ns": statistics.median(c["process_py_ns"][i] / c["process_ratios"][i] for i in chosen)})
        slow = {**real, "cases": cases}
        assert sum(overcpp_read.apart(a["ratio"], b["ratio"]) > overcpp_read.AGREE
                   for a, b in zip(real["cases"], cases, strict=True)) >= 34
        flagged += marked([*found, slow])
    assert flagged == 8


def test_a_real_start_without_fast_processes_is_marked_and_left_out(machine):
    """Known answers on the H200's four machine starts booted at 08:37, 08:52, 09:13 and 09:29 UTC, two runs at
    main each. On the first, almost no process reached the fast state: its runs ran their Python side x1.20 and
    x1.51 slower than the fastest run, their C++ twins x1.20 and x1.40 (the first eight fast-state runs: at most
    x1.14; the later starts' six: x1.04-1.13). The second of them agrees with none of the first eight runs on
    90% of the cases (58-62%); the first agrees with all eight (90-93%) but not with the second start's two
    (82%, 89%). The mark is the fast-state window applied to runs (SLOW_STATE = stats.FAST_WINDOW, 1.15; 1.2
    would let the first through). It falls on the first start's two runs and on no other; the overview leaves
    them out of the number and the range. The third start (x1.13, x1.11) agrees with the second start's runs
    (97-99%) but with only 3 and 6 of the first eight (85-95%: launches with arguments +6-9%); the fourth
    (x1.04, x1.07) with all eight, its launches back at their earlier level. So --agreement, without the marked
    runs, counts 76 of 84 pairs across starts reaching 90%, not all. A build of another commit, measured once,
    is judged against main's runs through its C++ twins: twins x1.58 slower than main's fastest run are in the
    slow state too."""
    found = fast_state_runs(machine, until=at("10:00"))
    first, later = first_fast_runs(machine), fast_state_runs(machine, at("08:00"), at("10:00"))
    assert len(first) == 8 and len(later) == 8 and found == [*first, *later]
    assert len({r["host"]["start"] for r in later}) == 4
    factors = overcpp_read.slow_factors(found)
    assert [overcpp_read.in_slow_state(x) for x in factors] == [False] * 8 + [True] * 2 + [False] * 6
    assert 1.2 < factors[8] < 1.21 and 1.39 < factors[9] < 1.41 and max(factors[:8] + factors[10:]) < 1.14

    def reaches(a, b):
        pair = overcpp_read.agreement([a, b])[0]
        return pair["agree"] >= overcpp_read.SHARE * pair["cases"]

    assert all(reaches(r, later[0]) for r in first) and not any(reaches(r, later[1]) for r in first)
    assert not reaches(later[0], later[2]) and not reaches(later[0], later[3])
    assert all(reaches(r, x) for r in first for x in later[2:4]) and reaches(later[2], later[3])
    assert all(reaches(x, y) for x in later[2:4] for y in later[4:]) and reaches(later[4], later[5])
    assert [sum(reaches(r, x) for r in first) for x in later[4:]] == [3, 6, 8, 8]
    for case, spread in overcpp_read.over_cpp_cases(found).values():
        assert spread["left_out"] == 2 and overcpp_read.slow_state(spread) is None
        assert case not in later[0]["cases"] and case not in later[1]["cases"]
    # what `cuda-bench over-cpp` says when it has just measured each of the later eight runs
    notes = [overcpp_read.slow_run_note(found[:k]) for k in range(9, 17)]
    assert notes[0].startswith("this run's C++ twins ran ×1.203 slower than their fastest recorded run on this")
    assert notes[1].startswith("this run's C++ twins ran ×1.400 slower") and notes[2:] == [None] * 6
    slow = {overcpp_read.run_label(r): x for r, x in zip(found, factors, strict=True) if overcpp_read.in_slow_state(x)}
    text = overcpp_read.agreement_markdown(overcpp_read.agreement(found), slow=slow)
    first, second = (overcpp_read.run_label(run) for run in later[:2])
    assert f"{first} ×1.203, {second} ×1.400. Without them:" in text
    assert "- on one machine start: 7 of 7 pairs agree on at least 90% of the cases (from 98% to 100%)" in text
    assert text.endswith("- across machine starts: 76 of 84 pairs agree on at least 90% of the cases (from 85% to 100%)"
                         "; on the cases whose C++ twin did not move beside the others, 84 of 84 (from 93% to 100%)")

    # another commit measured once: its twins ran x1.58 slower than main's fastest run (the run of 04:42)
    fastest = found[factors.index(min(factors))]
    other = {**fastest, "commit": "6" * 40, "host": {"start": "another", "boot": None},
             "cases": [{**c, "cpp_ns": c["cpp_ns"] * 1.58} for c in fastest["cases"]]}
    assert overcpp_read.slow_factors([other]) == [1.0]
    assert overcpp_read.slow_run_note([other]) is None  # nothing to judge by
    assert 1.55 < overcpp_read.slow_factors([other], found)[0] < 1.6 and overcpp_read.slow_run_note([other], found)
    cases = overcpp_read.over_cpp_cases([other], found)
    assert all(overcpp_read.slow_state(spread) and "left_out" not in spread for _, spread in cases.values())


CPU_BOUND = ("SetCurrent", "ComputeCapability", "CurrentComputeCapability", "GetKernel")  # the subset's other cases


def launch_path(record, reference):
    """(the launch twins' pace beside CPU-bound twins, the launch rows' ratio shift) of an over-C++ record: each
    the median over cases of the value over the case's median in ``reference``, over the 18 launches with
    arguments; the pace is their cpp_ns over that of the CPU-bound twins' (:data:`CPU_BOUND`, twelve cases),
    1.0 where the launch path keeps its usual pace beside the CPU."""
    def median_of(name, key):
        return statistics.median(next(c[key] for c in r["cases"] if c["name"] == name) for r in reference)

    cases = {c["name"]: c for c in record["cases"]}
    launches = [n for n in cases if ".Launch.time_launch(" in n and "'none'" not in n]
    cpu = [n for n in cases if n.split(".")[1] in CPU_BOUND]

    def pace(names):
        return statistics.median(cases[n]["cpp_ns"] / median_of(n, "cpp_ns") for n in names)

    return (pace(launches) / pace(cpu),
            statistics.median(cases[n]["ratio"] / median_of(n, "ratio") for n in launches))


def test_launch_rows_move_with_the_cpp_launch_path_and_the_twins_control_sets_them_apart(machine):
    """Known answers on the H200's four machine starts booted at 10:19, 10:33, 10:45 and 10:58 UTC, two full runs
    at main each, none in the slow state (x1.00-1.15). What moves the launch rows from one start to the next
    (4-9% on the starts before) is the C++ side: over the 18 fast-state runs up to and with the first of these
    starts, the launch rows' ratios move against the launch twins' pace beside the CPU-bound twins (correlation
    below -0.95; that pace alone, with no Python in it, spans more than 15%). The fit over those 18 runs
    (1.618 - 0.614 x pace) predicts the other three starts' six runs' launch shifts within 2%. --agreement's
    control sets those rows apart: over the 22 runs not in the slow state, 184 of 220 cross-start pairs reach
    90% of all cases, and 219 of 220 over the cases whose twin did not move beside the others (in the worst
    pair all 21 launch twins moved, with DeviceSync, module loads and four others). The overview: 22 runs on 11
    starts, 59 of 91 cases within 5% from lowest to highest."""
    runs = fast_state_runs(machine, until=at("11:20"))
    before, recent = fast_state_runs(machine, until=at("10:00")), fast_state_runs(machine, at("10:00"), at("11:20"))
    assert len(before) == 16 and len(recent) == 8 and runs == [*before, *recent]
    assert len({r["host"]["start"] for r in recent}) == 4
    factors = overcpp_read.slow_factors(runs)
    assert not any(overcpp_read.in_slow_state(x) for x in factors[16:])

    fitted = [*before, *recent[:2]]
    paces, shifts = zip(*(launch_path(r, fitted) for r in fitted), strict=True)
    assert statistics.correlation(paces, shifts) < -0.95 and max(paces) / min(paces) > 1.15
    slope, intercept = statistics.linear_regression(paces, shifts)
    assert (round(intercept, 3), round(slope, 3)) == (1.618, -0.614)
    for record in recent[2:]:
        pace, shift = launch_path(record, fitted)
        assert abs(shift / (intercept + slope * pace) - 1) < 0.02

    kept = [r for r, x in zip(runs, factors, strict=True) if not overcpp_read.in_slow_state(x)]
    cross = [p for p in overcpp_read.agreement(kept) if p["same_start"] is False]
    assert len(cross) == 220 and sum(p["agree"] >= overcpp_read.SHARE * p["cases"] for p in cross) == 184
    assert sum(p["still_agree"] >= overcpp_read.SHARE * (p["cases"] - p["twins_moved"]) for p in cross) == 219
    worst = min(cross, key=lambda p: p["agree"] / p["cases"])
    assert (worst["a"], worst["b"], worst["twins_moved"]) == (
        "overhead-cb56ab9f9-s14-call3a", "overhead-cb56ab9f9-s15-call1a", 30)

    cases = overcpp_read.over_cpp_cases([r for r in records.read(RESULTS / machine, "over-cpp")
                                    if r["commit"].startswith("cb56ab9f9") and r["date"] < at("11:20")])
    assert {(s["runs"], s["starts"], s["left_out"]) for _, s in cases.values()} == {(22, 11, 2)}
    assert sum(s["high"] / s["low"] - 1 <= overcpp_read.AGREE for _, s in cases.values()) == 59


def test_a_new_over_cpp_run_is_read_against_the_earlier_run_nearest_the_fast_state(machine):
    """overcpp_read.repeat_note, what `cuda-bench over-cpp` prints when a run ends: the issue's test against the
    commit's earlier run nearest the fast state (not in the slow state, of the same kind), with the twins'
    control, against the records there were when the run ended. Known answers on the H200's runs at cb56ab9f9:
    the run of 10:49 against the one of 04:42 (x1.00), 83 of 91 cases within 5%, 14 twins moved beside the
    others, 72 of the other 77 agree; the run of 10:22, whose launch path ran slow beside the CPU, 77 of 91 with
    26 twins moved, 62 of 65 over the rest. The first run of a commit, or one with only slow-state or other-kind
    runs before it, has nothing to be read against."""
    everything = records.read(RESULTS / machine, "over-cpp")
    runs = [r for r in everything if r["commit"].startswith("cb56ab9f9")]

    def note(time):  # as over-cpp printed it when the run ended: against the records there were then
        k = next(i for i, r in enumerate(runs) if r["date"].startswith(at(time)))
        then = everything[:next(i for i, r in enumerate(everything) if r is runs[k]) + 1]
        return overcpp_read.repeat_note(runs[:k + 1], then)

    assert note("10:49") == (
        "against overhead-cb56ab9f9-s13-call3b (the earlier run of cb56ab9f9 nearest the fast state, ×1.00, on "
        "another machine start): 83 of 91 cases (91%) give the same ratio within 5%; 14 C++ twins moved more "
        "than 5% beside the others (the machine, not Python), and over the other 77 cases 72 (94%) agree")
    assert "77 of 91 cases (85%)" in note("10:22") and "26 C++ twins" in note("10:22")
    assert "over the other 65 cases 62 (95%)" in note("10:22")
    assert "on the same machine start" in note("04:06")
    fast = [r for r in runs if overcpp_read.fast_kind(overcpp_read.run_kind(r))]
    assert overcpp_read.repeat_note(fast[:1], everything) is None
    slow_first = fast_state_runs(machine, at("08:00"), at("08:50"))  # the two runs of the start booted at 08:37
    assert len(slow_first) == 2 and overcpp_read.repeat_note([slow_first[1], fast[-1]], everything) is None
    older = [r for r in runs if not overcpp_read.fast_kind(overcpp_read.run_kind(r))]
    assert overcpp_read.repeat_note([older[0], fast[-1]], everything) is None  # another kind: not comparable


def history_before(machine, tmp_path, before):
    """The H200 history's step records made before ``before``, and the steps ``history.steps`` makes of them:
    the history as it stood then (a later measurement of the same step would join it)."""
    lines = [r for r in read_lines(RESULTS / machine / "steps.jsonl") if r["date"] < before]
    write_records(tmp_path / machine, "step", lines)
    return lines, history.steps(tmp_path, machine)


def main_runs(machine, before):
    """(cb56ab9f9's over-C++ runs recorded before ``before``, every over-C++ run recorded by then)."""
    everything = [r for r in records.read(RESULTS / machine, "over-cpp") if r["date"] < before]
    return [r for r in everything if r["commit"].startswith("cb56ab9f9")], everything


def fast_state_agreement(runs):
    """Over the runs read in the fast state and not in the slow state: (those runs, (how many, on how many
    machine starts, cross-start pairs, of those reaching 90% of all cases, of those reaching 90% of the cases
    whose twin held still))."""
    fast = [r for r in runs if overcpp_read.fast_kind(overcpp_read.run_kind(r))]
    kept = [r for r, x in zip(fast, overcpp_read.slow_factors(fast), strict=True) if not overcpp_read.in_slow_state(x)]
    cross = [p for p in overcpp_read.agreement(kept) if p["same_start"] is False]
    return kept, (len(kept), len({r["host"]["start"] for r in kept}), len(cross),
                  sum(p["agree"] >= overcpp_read.SHARE * p["cases"] for p in cross),
                  sum(p["still_agree"] >= overcpp_read.SHARE * (p["cases"] - p["twins_moved"]) for p in cross))


def test_the_main_jobs_first_step_flags_nothing_and_its_over_cpp_run_agrees(machine):
    """Known answers on what the main job (`cuda-bench run`) wrote on the H200 at 14:28 UTC, on a twelfth machine
    start: the paired step c278ecb3d -> cb56ab9f9 (a commit that does not touch the suite's paths) flags
    nothing: 103 cases measured on both sides (the 7 multi-thread or CuPy 'release' forms skipped, with their
    reasons), every ratio within 1% (the farthest, Compile cubin on cuda.core, x0.992 [0.985, 0.996]), the
    harness floor x1.000; the over-C++ run of cb56ab9f9 it made afterwards gives 91 of 91 ratios within 5% of
    the earlier run nearest the fast state (overhead-cb56ab9f9-s15-call5b). Over the 23 runs not in the slow
    state (twelve starts), 203 of 242 cross-start pairs reach 90% of all cases, and 241 of 242 over the cases
    whose twin did not move beside the others; 58 of 91 cases stay within 5% from lowest to highest."""
    (step,) = [s for s in read_lines(RESULTS / machine / "steps.jsonl") if s["date"] < at("14:40")]
    assert (step["base"][:9], step["head"][:9], step["kind"]) == ("c278ecb3d", "cb56ab9f9", "step")
    assert len(step["cases"]) == 103 and {c["verdict"] for c in step["cases"]} == {"same"}
    assert len(step["skipped"]) == 7 and not step["errors"]
    assert max(abs(c["ratio"] - 1) for c in step["cases"]) < 0.01
    floor = next(c for c in step["cases"] if c["name"].startswith("bench_harness.Floor"))
    assert round(floor["ratio"], 3) == 1.0
    # the overview's chained index at cb56ab9f9 is that one step's ratio: x1.007 for EventCreate('core'),
    # x0.992 the lowest (Compile cubin on cuda.core), x1.007 the highest
    chain = history.chains([step], [step["base"], step["head"]])["bench_event.EventCreate.time_event_create('core')"]
    value, _, _, root, count = chain["13.3.1 wheel"][step["head"]]
    assert (round(value, 3), root[:9], count) == (1.007, "c278ecb3d", 1)
    shown = [round(c["ratio"], 3) for c in step["cases"] if not c.get("control")]
    assert (min(shown), max(shown)) == (0.992, 1.007)

    runs, everything = main_runs(machine, at("14:40"))
    assert overcpp_read.run_label(runs[-1]) == "2026-12-04T14:29:12Z"  # run's record: no --out, named by its date
    assert overcpp_read.repeat_note(runs, everything).startswith(
        "against overhead-cb56ab9f9-s15-call5b (the earlier run of cb56ab9f9 nearest the fast state, ×1.00, on "
        "another machine start): 91 of 91 cases (100%) give the same ratio within 5%")
    assert fast_state_agreement(runs)[1] == (23, 12, 242, 203, 241)
    cases = overcpp_read.over_cpp_cases(runs)
    assert {(s["runs"], s["starts"], s["left_out"]) for _, s in cases.values()} == {(23, 12, 2)}
    assert sum(s["high"] / s["low"] - 1 <= overcpp_read.AGREE for _, s in cases.values()) == 58


def test_a_step_measured_again_shows_the_numbers_its_verdict_rests_on(tmp_path):
    """Several records of one step join: a regression shows its newest flag's numbers (not a later
    unflagged measurement's), a flag not reproduced too, with the measurement that cleared it beside
    them, a start is the record's ``host.start`` (the kernel's boot id where it has one), and
    records that do not say which start they ran on count as one start, so they cannot confirm one
    another. Flags on two starts confirm each other when one of them had a layout per process; two
    with one fixed layout per build do not, since that layout repeats on every start."""
    def record(start, ratio, verdict, name="bench_x.X.time_x('core')", layouts="random"):
        return step_record(host={"start": start, "boot": start and f"2026-12-04T0{start}:00:00Z"},
                           date=start or "?", settings={"layouts": layouts, "confidence": 0.95, "cores": [1]},
                           cases=[step_case(name, ratio, verdict)])

    def merged(*found):
        write_records(tmp_path / "m", "step", found)
        (step,) = history.steps(tmp_path, "m")
        return step["cases"][0]

    case = merged(record("1", 1.05, "regression"), record("1", 1.0, "same"))  # again on the same start
    assert (case["verdict"], case["confirmed"], case["ratio"]) == ("regression", False, 1.05)
    case = merged(record("1", 1.05, "regression"), record("2", 1.04, "regression"), record("3", 1.0, "same"))
    assert (case["verdict"], case["confirmed"], case["ratio"]) == ("regression", True, 1.04)
    assert standing(case) == "confirmed on 2 machine starts"
    case = merged(record("1", 1.05, "regression"), record("2", 1.0, "same"))
    cleared = case["cleared_by"]["ratio"]
    assert (case["verdict"], case["ratio"], cleared) == ("not reproduced", 1.05, 1.0)
    assert history.chain_link(case)["ratio"] == 1.0  # the chain goes by what the verdict rests on
    case = merged(record(None, 1.05, "regression"), record(None, 1.04, "regression"))
    assert (case["verdict"], case["confirmed"]) == ("regression", False)
    assert standing(case) == "flagged on one machine start only, not yet confirmed"
    assert measurements(case) == ("×1.050 [1.040, 1.060] regression (start not recorded); "
                                  "×1.040 [1.030, 1.050] regression (start not recorded)")
    case = merged(record("1", 1.05, "regression", layouts="fixed"), record("2", 1.04, "regression", layouts="fixed"))
    assert (case["verdict"], case["confirmed"]) == ("regression", False)
    assert standing(case) == ("flagged on 2 machine starts, each with one layout per build (ASLR off), not yet "
                              "confirmed: that layout repeats on every start")
    case = merged(record("1", 1.05, "regression", layouts="fixed"), record("2", 1.04, "regression"))
    assert (case["verdict"], case["confirmed"]) == ("regression", True)
    case = merged(record("1", 1.05, "regression", layouts="fixed"), record("2", 1.04, "regression", layouts="fixed"),
                  record("3", 1.0, "same"))
    assert case["verdict"] == "not reproduced"


def test_a_step_measured_again_says_which_cases_no_record_measured(tmp_path):
    """A recheck measures only the flagged case and the floor: the step still names the case its first record
    could not measure, drops an error a later record measured, keeps a lost-pairs note only on a measured
    case, and adds up its measuring time."""
    x, y, z, w = (f"bench_x.X.time_{n}('core')" for n in "xyzw")
    first = step_record(host={"start": "1", "boot": None}, date="1", seconds=100, build_seconds=30,
                        cases=[step_case(x), step_case(w)], errors={y: "head worker died", z: "setup failed"},
                        lost={x: "1 of 45 process pairs lost", w: "2 of 45 process pairs lost"})
    again = step_record(host={"start": "2", "boot": None}, date="2", seconds=20, build_seconds=0,
                        cases=[step_case(y), step_case(w, 1.01)])
    write_records(tmp_path / "m", "step", [first, again])
    (step,) = history.steps(tmp_path, "m")
    assert step["errors"] == {z: "setup failed"}
    assert step["lost"] == {x: "1 of 45 process pairs lost"}  # w's numbers shown are the recheck's, which lost none
    assert next(c for c in step["cases"] if c["name"] == w)["ratio"] == 1.01
    assert (step["seconds"], step["build_seconds"]) == (120, 30)
    assert [c["name"] for c in step["cases"]] == [x, w, y]


def test_the_steps_page_and_markdown_name_what_a_step_did_not_measure(tmp_path):
    x, y = "bench_x.X.time_x('core')", "bench_x.X.time_y('core')"
    write_records(tmp_path / "m", "step", [step_record(
        date="2026-12-04T17:00", seconds=10, settings={"layouts": "random", "confidence": 0.95, "cores": [1],
                                                       "pairs": 45},
        cases=[step_case(x)], errors={y: "log tail\nhead worker (b) died (exit 7) during setup"},
        lost={x: "1 of 45 process pairs lost, measured from the other 44; the first: timeout"})])
    steps = history.steps(tmp_path, "m")
    page = steps_page.render_steps({"m": steps})
    assert "<th>not measured</th>" in page and '<td data-count="not measured">1</td>' in page
    assert f'data-case="{pages_html.esc(y)}" data-verdict="not measured"' in page
    assert "not measured: head worker (b) died" in page
    assert "log tail" not in page  # the line that says what went wrong, not the worker's log
    assert "measured from fewer process pairs: 1 of 45 process pairs lost" in page
    text = report.steps_markdown("m", steps)
    assert "| 0 | 0 | 1 | 0 | 1 | 0 | 10 |" in text
    assert f"`{y}`: not measured: head worker (b) died (exit 7) during setup" in text
    assert f"`{x}`: measured from fewer process pairs: 1 of 45 process pairs lost" in text


def test_a_flag_is_marked_only_when_all_the_code_its_timed_calls_run_is_the_same_version():
    """`text.unchanged`: a cuda.core form runs cuda-core and cuda-bindings code, a cuda.bindings form
    cuda-bindings', a CuPy form one of CuPy's two distributions'; controls none. Any of them different, missing
    on one side, or a record without versions: no mark."""
    both = {"cuda-core": "1.2.0", "cuda-bindings": "13.3.1", "cupy-cuda13x": "14.2.0"}
    core, bindings, cupy = (f"bench_x.X.time_x('{api}', '2 ptr')" for api in ("core", "bindings", "cupy"))
    assert unchanged(core, {"base": both, "head": both}) == "cuda-core 1.2.0, cuda-bindings 13.3.1 on both sides"
    assert unchanged(bindings, {"base": both, "head": both}) == "cuda-bindings 13.3.1 on both sides"
    assert unchanged(cupy, {"base": both, "head": both}) == "cupy-cuda13x 14.2.0 on both sides"
    other = both | {"cuda-bindings": "12.9.10"}
    assert unchanged(core, {"base": both, "head": other}) == "" == unchanged(bindings, {"base": both, "head": other})
    assert unchanged(cupy, {"base": both, "head": other}) == "cupy-cuda13x 14.2.0 on both sides"
    cu12 = {k: v for k, v in both.items() if k != "cupy-cuda13x"} | {"cupy-cuda12x": "14.2.0"}
    assert unchanged(cupy, {"base": both, "head": cu12}) == ""
    assert unchanged(bindings, {"base": both, "head": None}) == "" == unchanged(bindings, None)
    assert unchanged("bench_harness.Floor.time_noop('noop')", {"base": both, "head": both}) == ""
    assert unchanged("bench_cpp.Cpp.track_latency('launch[2 ptr]')", {"base": both, "head": both}) == ""


def test_the_steps_page_markdown_and_nightly_issue_mark_a_flag_whose_code_did_not_change(tmp_path):
    """Every place that shows a history step's regression adds the mark from that step's own versions."""
    same, moved = "bench_x.X.time_x('bindings', '2 ptr')", "bench_x.X.time_x('core', '2 ptr')"
    versions = {"base": {"cuda-core": "1.2.0", "cuda-bindings": "13.3.1"},
                "head": {"cuda-core": "1.2.1", "cuda-bindings": "13.3.1"}}
    write_records(tmp_path / "m", "step", [step_record(
        host={"start": start, "boot": f"2026-12-04T0{start}:00:00Z"}, date="2026-12-04T17:00", seconds=10,
        versions=versions, cases=[step_case(same, 1.05, "regression"), step_case(moved, 1.05, "regression")])
        for start in "12"])  # flagged on two starts, each with a layout per process: confirmed
    steps = history.steps(tmp_path, "m")
    mark = "confirmed on 2 machine starts; cuda-bindings 13.3.1 on both sides"
    page = steps_page.render_steps({"m": steps})
    assert page.count(pages_html.esc(mark)) == 1 and "on both sides" not in page.split(pages_html.esc(moved))[1]
    text = report.steps_markdown("m", steps)
    assert f"`{same}`: regression ({mark})" in text and f"`{moved}`: regression (confirmed on 2 machine starts)" in text
    issue, count = report.issue_body({"m": steps})
    assert count == 2 and issue.count("on both sides") == 1 and f"| {mark} |" in issue


def test_the_overviews_regressed_mark_carries_the_same_versions_note(machine):
    """The overview's "regressed" label (its tooltip is the flag's standing) reads the versions of the step
    that reached the commit: a cuda.bindings flag there says cuda-bindings was the same on both sides."""
    newest_data = json.loads(newest(machine).read_text())
    name = "bench_launch.Launch.time_launch('bindings', '2 ptr')"
    flag = {"name": name, "ratio": 1.05, "low": 1.04, "high": 1.06, "verdict": "regression", "confirmed": False,
            "threshold": 0.01, "base_ns": 100, "head_ns": 105}
    step = {"base": "0" * 40, "head": newest_data["commit_hash"], "cases": [flag],
            "versions": {side: {"cuda-core": f"1.2.0.post1+g{side}", "cuda-bindings": "13.3.1"} for side in "ab"}}
    rows = overview.overview_rows([(machine, newest_data)], {machine: [step]}, {}, suite_names())
    (cell,) = [r["cells"]["bindings"] for r in rows
               if r["benchmark"] == "bench_launch.Launch.time_launch" and r["case"] == ["2 ptr"]]
    assert cell["regression"] and cell["step"]["standing"] == (
        "flagged on one machine start only, not yet confirmed; cuda-bindings 13.3.1 on both sides")



PROGRAM_OPTIONS = "bench_program.ProgramOptionsCreate.time_program_options_create('core')"


def test_a_flag_that_another_machine_start_does_not_reproduce_leaves_the_regressions(machine, tmp_path):
    """Known answers on the H200's history as it stood at 16:05 UTC: `cuda-bench steps` made main's three missing
    steps, 270be80a3 -> db347c905 -> 76bac4e11 -> c278ecb3d, on one machine start (booted 15:35). The last
    flagged ProgramOptionsCreate('core') x1.024 [1.015, 1.028]; `cuda-bench steps --recheck` on another start
    (booted 15:55) measured it again, x0.999 [0.993, 1.004]. The history's step then has two measurements of
    it, from two starts: not reproduced, so neither the nightly issue nor the Regressions page lists it, and
    the step's other 101 cases stay "same". The chained index at cb56ab9f9 runs over four steps from 270be80a3
    (EventCreate('core') x1.016). Of the two over-C++ runs made one after the other on a thirteenth start, the
    second ran in the slow state (its twins x1.19 slower than the fastest run) and is left out; the first joins
    the fast-state runs: 24 on thirteen starts, 225 of 265 cross-start pairs reach 90% of all cases, 264 of 265
    over the cases whose twin held still."""
    lines, steps = history_before(machine, tmp_path, at("16:05"))
    assert [(s["base"][:9], s["head"][:9], len(s["rechecks"])) for s in steps] == [
        ("c278ecb3d", "cb56ab9f9", 0), ("270be80a3", "db347c905", 0), ("db347c905", "76bac4e11", 0),
        ("76bac4e11", "c278ecb3d", 1)]
    assert "--recheck" in steps[-1]["rechecks"][0]["command"]
    case = next(c for c in steps[-1]["cases"] if c["name"] == PROGRAM_OPTIONS)
    assert (case["verdict"], case["confirmed"]) == ("not reproduced", False)
    assert [(m["verdict"], m["boot"], round(m["low"], 3), round(m["high"], 3)) for m in case["measurements"]] == [
        ("regression", "2026-12-04T15:35:53Z", 1.015, 1.028), ("same", "2026-12-04T15:55:54Z", 0.993, 1.004)]
    assert len({m["start"] for m in case["measurements"]}) == 2
    # the numbers shown are the flag's, the measurement that cleared it beside them
    assert case["ratio"] == case["measurements"][0]["ratio"]
    assert case["cleared_by"] == case["measurements"][-1]
    flagging = next(c for c in lines[3]["cases"] if c["name"] == PROGRAM_OPTIONS)
    assert (flagging["verdict"], round(flagging["ratio"], 3)) == ("regression", 1.024)
    for step in steps:
        counted = [c for c in step["cases"] if not c.get("control")]
        assert len(step["cases"]) == 103 and not step["errors"]
        assert {c["verdict"] for c in counted if c["name"] != PROGRAM_OPTIONS} == {"same"}
    assert history.flagged_steps(steps) == [] and report.issue_body({machine: steps})[1] == 0
    assert "not reproduced on another machine start" in report.steps_markdown(machine, steps)

    # the 13.3.1 wheel's chain: four steps of that one build from 270be80a3 to cb56ab9f9
    order = ["270be80a3", "db347c905", "76bac4e11", "c278ecb3d", "cb56ab9f9"]
    commits = sorted({c for s in steps for c in (s["base"], s["head"])}, key=lambda c: order.index(c[:9]))
    chain = history.chains(steps, commits)["bench_event.EventCreate.time_event_create('core')"]["13.3.1 wheel"]
    value, _, _, root, count = chain[steps[0]["head"]]
    assert (round(value, 3), root[:9], count) == (1.016, "270be80a3", 4)

    runs, _ = main_runs(machine, at("16:05"))
    assert [r["date"] for r in runs[-2:]] == [at("15:44:06Z"), at("15:45:09Z")]
    assert runs[-1]["host"]["start"] == runs[-2]["host"]["start"]
    fast = [r for r in runs if overcpp_read.fast_kind(overcpp_read.run_kind(r))]
    factors = dict(zip((r["date"] for r in fast), overcpp_read.slow_factors(fast), strict=True))
    assert not overcpp_read.in_slow_state(factors[at("15:44:06Z")])
    assert overcpp_read.in_slow_state(factors[at("15:45:09Z")]) and 1.18 < factors[at("15:45:09Z")] < 1.2
    kept, counts = fast_state_agreement(runs)
    assert counts == (24, 13, 265, 225, 264)
    assert not any(p["same_day"] is False for p in overcpp_read.agreement(kept))  # all on 2026-12-04: no cross-day pair


def test_the_main_job_again_joins_its_step_and_adds_a_start(machine, tmp_path):
    """Known answers on the main job's run of 16:16 UTC on the H200 (a fourteenth machine start): `cuda-bench
    run` measured the step c278ecb3d -> cb56ab9f9 again, its record naming its bindings and the kernel's boot
    id; it joins the record of 14:28 (two measurements of each case, from two starts), nothing flagged, every
    ratio within 1%. Its over-C++ run gives 88 of 91 ratios within 5% of the run nearest the fast state and
    joins the fast-state runs: 25 on fourteen starts, 244 of 289 cross-start pairs reach 90% of all cases, 288
    of 289 over the cases whose twin held still."""
    lines, steps = history_before(machine, tmp_path, at("16:30"))
    newest = lines[-1]
    assert (newest["base"][:9], newest["head"][:9], newest["bindings"]) == ("c278ecb3d", "cb56ab9f9", "13.3.1")
    assert newest["host"]["start"] not in (None, newest["host"]["boot"])  # the boot id
    assert newest["command"].split()[1] == "run"
    step = next(s for s in steps if s["head"] == newest["head"])
    assert len(step["rechecks"]) == 1 and {c["verdict"] for c in step["cases"]} == {"same"}
    assert {len({m["start"] for m in c["measurements"]}) for c in step["cases"]} == {2}
    assert max(abs(m["ratio"] - 1) for c in step["cases"] if not c.get("control") for m in c["measurements"]) < 0.01

    runs, everything = main_runs(machine, at("16:30"))
    assert overcpp_read.repeat_note(runs, everything).startswith(
        "against overhead-cb56ab9f9-s15-call5b (the earlier run of cb56ab9f9 nearest the fast state, ×1.00, on "
        "another machine start): 88 of 91 cases (97%) give the same ratio within 5%")
    assert fast_state_agreement(runs)[1] == (25, 14, 289, 244, 288)


def test_the_rule_confirms_the_injected_slowdown_and_keeps_the_aa_silent_on_the_recorded_runs(tmp_path):
    """The history's rule (a flag stands once a second machine start flags it, one of the two with a layout per
    process) on real H200 paired runs (fixtures/paired), each taken as a measurement of one step: the spin-24
    build of Device.set_current, measured with one fixed layout per build, is a regression flagged on one start
    and not yet confirmed; measured again on another start with a layout per process, it is confirmed, and
    nothing else is flagged. The whole-suite A/A runs (one fixed layout, a layout per process, and the one
    whose two workers were killed) flag nothing, so the rule has nothing to confirm."""
    spin = "bench_device.SetCurrent.time_set_current('core')"

    def as_step(*names):
        found = [paired_run(name) | {"base": "a" * 40, "head": "b" * 40} for name in names]
        write_records(tmp_path / "m", "step", found)
        (step,) = history.steps(tmp_path, "m")
        return step

    step = as_step("injected-spin24-fixed-layout")
    flagged = history.flagged_steps([step])
    assert [(case["name"], case["confirmed"], standing(case)) for _, case in flagged] == [
        (spin, False, "flagged on one machine start only, not yet confirmed")]
    step = as_step("injected-spin24-fixed-layout", "injected-spin24")
    flagged = history.flagged_steps([step])
    assert [(case["name"], case["confirmed"], standing(case)) for _, case in flagged] == [
        (spin, True, "confirmed on 2 machine starts")]
    assert [(m["layouts"], round(m["low"], 3)) for m in flagged[0][1]["measurements"]] == [
        ("fixed", 1.048), ("random", 1.053)]
    step = as_step("aa-fixed-layout", "aa", "aa-two-workers-killed")
    assert len(step["cases"]) == 103 and {c["verdict"] for c in step["cases"]} == {"same"}
    assert {len(c["measurements"]) for c in step["cases"]} == {3}


LADDER = ["72acaaf0a", "4135a2f76", "111c71329", "b1acdb2fd", "3c307b40f", "73f808a6d"]  # 0.1.0 ... 0.5.1


def test_the_release_ladders_steps_stand_on_two_starts_and_stay_out_of_mains_issue(machine, tmp_path):
    """Known answers on the H200's history as it stood at 17:20 UTC: `cuda-bench steps --bindings auto` paired the
    six releases, 0.1.0 -> 0.1.1 -> 0.2.0 -> 0.3.2 -> 0.4.2 -> 0.5.1, each side on the cuda-bindings it supports
    (12.9.10 up to 0.2.0, 13.3.1 from 0.3.2); steps 1-4 twice on one machine start, then `steps --recheck`
    measured every flag again on another start (the last step's on a third). Of 47 flags, 40 were flagged on
    two starts and 7 are not reproduced. The 40 are not confirmed: every measurement had one fixed layout per
    build, which repeats on every start (a recheck with a layout per process confirms them or not). The
    twice-measured steps agree with themselves: at least 90/92, 90/92, 99/100 and 93/101 cases within 1%. The
    nightly issue, about main, lists none of them and says how many there are."""
    _, steps = history_before(machine, tmp_path, at("17:20"))
    ladder = [s for s in steps if history.release_step(s)]
    assert [s["base"][:9] for s in ladder] + [ladder[-1]["head"][:9]] == LADDER
    assert not any(history.release_step(s) for s in steps if s not in ladder)
    # every record's tags are the cuda-core its builds report, and a record without tags built main (every
    # record, not only each step's first)
    found = read_lines(RESULTS / machine / "steps.jsonl")
    built = [[r["versions"][side]["cuda-core"] for side in ("base", "head")] for r in found]
    assert sum(1 for r in found if r["release_tags"]) == 14
    assert all(r["release_tags"] == [f"cuda-core-v{v}" for v in versions] if r["release_tags"] else
               all(v.startswith("1.2.0.post1+g") for v in versions) for r, versions in zip(found, built, strict=True))
    assert [{side: v["cuda-bindings"] for side, v in s["versions"].items()} for s in ladder][2] == {
        "base": "12.9.10", "head": "13.3.1"}  # 0.2.0 -> 0.3.2 crosses the CUDA 12/13 boundary

    def counted(step, verdict):
        return [c for c in step["cases"] if c["verdict"] == verdict and not c.get("control")]

    assert [len(counted(s, "regression")) for s in ladder] == [10, 2, 16, 5, 7]
    assert [len(counted(s, "not reproduced")) for s in ladder] == [2, 0, 4, 0, 1]
    assert not any(c["confirmed"] for s in ladder for c in counted(s, "regression"))
    assert {len({m["start"] for m in c["measurements"] if m["verdict"] == "regression"})
            for s in ladder for c in counted(s, "regression")} == {2}
    assert {m["layouts"] for s in ladder for c in s["cases"] for m in c["measurements"]} == {"fixed"}
    memory = next(c for c in ladder[-1]["cases"] if c["name"] == "bench_memory.MemoryResourceCreate."
                  "time_memory_resource_create('core')")
    assert standing(memory) == ("flagged on 2 machine starts, each with one layout per build (ASLR off), not yet "
                                "confirmed: that layout repeats on every start") and memory["low"] > 3.6
    launch = next(c for c in ladder[2]["cases"]
                  if c["name"] == "bench_launch.Launch.time_launch('bindings', '512 ptr')")
    assert [round(m["low"], 2) for m in launch["measurements"]] == [1.49, 1.5, 1.49]

    for step, within in zip(ladder[:4], [90, 90, 99, 93], strict=True):
        twice = [c["measurements"][:2] for c in step["cases"] if len(c["measurements"]) >= 2
                 and c["measurements"][0]["start"] == c["measurements"][1]["start"]]
        assert len(twice) == len(step["cases"])  # every case measured twice on the first start
        assert sum(abs(a["ratio"] / b["ratio"] - 1) <= 0.01 for a, b in twice) >= within

    # 0.2.0 -> 0.3.2 runs cuda-bindings 12.9.10 against 13.3.1: its 11 flagged cuda.bindings cases are put down to
    # that wheel change, not counted as the release's (the 29 other flags are)
    put_down = [c for c in counted(ladder[2], "regression") if history.attributed(ladder[2], c)]
    assert len(put_down) == 11 and {history.attributed(ladder[2], c) for c in put_down} == {
        "cuda-bindings 12.9.10 → 13.3.1"}
    assert not any(history.attributed(s, c) for s in ladder if s is not ladder[2] for c in s["cases"])
    text, count = report.issue_body({machine: steps})
    assert count == 0 and "Not counted here: 29 regressions between cuda-core releases" in text
    page = steps_page.render_steps({machine: steps})  # steps.html: main's history first, then the ladder's
    heads = re.findall(r'<tr data-base="\w+" data-head="(\w{9})', page)
    assert heads == [s["head"][:9] for s in reversed(steps) if s not in ladder] + LADDER[:0:-1]
    main = page.index(pages_html.esc("main's history"))
    assert main < page.index("between cuda-core releases") < page.index(LADDER[-1])


def test_the_main_jobs_step_measured_on_a_third_start_flags_nothing(machine, tmp_path):
    """Known answers on the main job's run of 17:35 UTC on the H200 (a fresh machine start): `cuda-bench run`
    measured c278ecb3d -> cb56ab9f9 a third time. Its record names no release tags (main's commits), nothing is
    flagged, no process pair was lost, and every ratio lies within 1.1%. The step's cases now each have
    measurements from three starts. The over-C++ run gives 89 of 91 ratios within 5% of the run nearest the
    fast state and joins the fast-state runs: 26 on fifteen starts, 268 of 314 cross-start pairs reach 90% of
    all cases, 313 of 314 over the cases whose twin held still."""
    lines, steps = history_before(machine, tmp_path, at("17:45"))
    newest = lines[-1]
    assert (newest["base"][:9], newest["head"][:9], newest["release_tags"]) == ("c278ecb3d", "cb56ab9f9", None)
    assert not newest["errors"] and newest["lost"] == {} and len(newest["cases"]) == 103
    assert max(abs(c["ratio"] - 1) for c in newest["cases"] if not c.get("control")) < 0.011
    step = next(s for s in steps if s["head"] == newest["head"])
    assert {c["verdict"] for c in step["cases"]} == {"same"}
    assert {len({m["start"] for m in c["measurements"]}) for c in step["cases"]} == {3}

    runs, everything = main_runs(machine, at("17:45"))
    assert overcpp_read.repeat_note(runs, everything).startswith(
        "against overhead-cb56ab9f9-s15-call5b (the earlier run of cb56ab9f9 nearest the fast state, ×1.00, on "
        "another machine start): 89 of 91 cases (98%) give the same ratio within 5%")
    assert fast_state_agreement(runs)[1] == (26, 15, 314, 268, 313)


def test_a_fresh_start_in_the_slow_state_is_warned_of_and_left_out_of_the_agreement(machine, tmp_path):
    """Known answers on the main job's run of 18:28 UTC on the H200 (a fresh machine start): the step
    c278ecb3d -> cb56ab9f9 a fourth time, nothing flagged and every ratio within 1.2%, now from four starts;
    its over-C++ run came up in the slow state (C++ twins x1.206 slower than their fastest recorded run), which
    `cuda-bench over-cpp` warns of as the run ends: the fast-state count stays 26 runs on fifteen starts,
    268 of 314."""
    lines, steps = history_before(machine, tmp_path, at("18:35"))
    newest = lines[-1]
    assert (newest["base"][:9], newest["head"][:9], newest["release_tags"], newest["lost"]) == (
        "c278ecb3d", "cb56ab9f9", None, {})
    assert max(abs(c["ratio"] - 1) for c in newest["cases"] if not c.get("control")) < 0.012
    step = next(s for s in steps if s["head"] == newest["head"])
    assert {c["verdict"] for c in step["cases"]} == {"same"}
    assert {len({m["start"] for m in c["measurements"]}) for c in step["cases"]} == {4}

    runs, everything = main_runs(machine, at("18:35"))
    new = runs[-1]
    assert new["date"] > at("17:45") and new["host"]["start"] not in {r["host"]["start"] for r in runs[:-1]}
    note = overcpp_read.slow_run_note([new], everything)
    assert note.startswith("this run's C++ twins ran ×1.206 slower than their fastest recorded run on this machine")
    assert fast_state_agreement(runs)[1] == (26, 15, 314, 268, 313)


def test_workers_killed_on_the_gpu_lose_two_pairs_and_nothing_else():
    """Known answers on an A/A of cb56ab9f9 on the H200 while another process SIGKILLed two of its workers
    (fixtures/paired/aa-two-workers-killed): the two cases whose worker died are measured from the other 44
    pairs and named, every other case from all 45; nothing is flagged, nothing is an error, and the run exits
    2, not 0."""
    data = paired_run("aa-two-workers-killed")
    assert sorted(data["lost"]) == ["bench_device.DeviceSync.time_device_sync('cupy')",
                                    "bench_launch.Launch.time_launch('cupy', 'none')"]
    for text in data["lost"].values():
        assert text.startswith("1 of 45 process pairs lost, measured from the other 44; the first: the head "
                               "worker (main) died (exit -9) during ")
    assert not data["errors"] and not paired.regressions(data)
    assert gate.exit_status(data) == INCOMPLETE == 2
    assert {c["name"]: len(c["pairs"]) for c in data["cases"] if len(c["pairs"]) != 45} == {
        name: 44 for name in data["lost"]}
    said = comment.comment(data)
    assert "**0 regressions**" in said and "2 measured without some process pairs" in said


def test_the_nightly_ladder_finds_no_release_newer_than_the_newest_measured_one(machine):
    """Known answers on the H200's history: the release ladder's environment (cuda-bindings auto, the system
    site) measured the six releases 0.1.0 ... 0.5.1 and none of main's commits; with 0.5.1 the newest release
    measured there, the nightly `cuda-bench ladder --new` has nothing newer to run (a release the ladder left
    out, older than 0.5.1, is not newer; main's head is no release)."""
    ladder_env = {"matrix": {"env": {"CUDA_BENCH_BINDINGS": ["auto"],
                                     "CUDA_BENCH_SYSTEM_SITE": ["/opt/torch/.venv/lib/python3.12/site-packages"]}}}
    measured = history.measured_in(RESULTS, machine, ladder_env)
    assert sorted(sha[:9] for sha in measured) == sorted(LADDER)  # the six releases, and not main's commits
    full = {sha[:9]: sha for sha in measured}
    versions = ["0.1.0", "0.1.1", "0.2.0", "0.3.2", "0.4.2", "0.5.1"]
    commits = [(f"cuda-core-v{v}", full[p]) for v, p in zip(versions, LADDER, strict=True)]
    commits.insert(3, ("cuda-core-v0.3.0", "0" * 40))  # a release the ladder left out: older, not newer
    main = next(r["commit"] for r in records.read(RESULTS / machine, "over-cpp"))
    assert history.newer_releases([*commits, ("main", main)], measured) == (commits[-1], [])
    newer = ("cuda-core-v0.6.0", main)  # were main's head tagged as a release: it alone, after 0.5.1
    assert history.newer_releases([*commits, newer], measured) == (commits[-1], [newer])


def test_the_comment_marks_the_flags_whose_code_is_the_same_version_in_both_builds(machine):
    """The comment on a paired run marks (†) each flag whose timed calls run only code that is the same version
    on both sides. On the H200's release step 0.4.2 -> 0.5.1 (its first record), two of its eight flags are
    cuda.bindings forms with cuda-bindings 13.3.1 on both sides; the cuda.core forms are not marked, cuda-core
    differs. A head with another cuda-bindings gets no mark."""
    (record,) = [r for r in read_lines(RESULTS / machine / "steps.jsonl")
                 if r["base"].startswith("3c307b40f") and r["date"] < at("17:10")]
    assert len(paired.regressions(record)) == 8
    text = comment.comment(record)
    assert text.count(" † |") == 2
    assert (f"| `{'bench_memory.PointerGetAttribute.time_pointer_get_attribute'}('bindings')` "
            "(`cuPointerGetAttribute`) † |") in text
    assert "† marks 2 cases whose timed calls run only code that is the same version in both builds " \
           "(cuda-bindings 13.3.1 on both sides)" in text
    record["versions"]["head"]["cuda-bindings"] = "13.3.2"
    assert "†" not in comment.comment(record)


def test_the_history_marks_a_flag_whose_code_is_the_same_version_on_both_sides(machine):
    """The steps page and the nightly issue say when the code a flagged form's calls run did not change in
    the step. On the release ladder three flags are marked: RuntimeGetDevice('bindings') at 0.3.2 -> 0.4.2 and
    PointerGetAttribute('bindings') at 0.4.2 -> 0.5.1 (cuda-bindings 13.3.1 on both sides), and CuPy's
    EventRecord at 0.2.0 -> 0.3.2 (cuda-bindings 12.9.10 -> 13.3.1 there, so its cuda.bindings launches are
    not). A cuda.core form is not: cuda-core differs between releases."""
    text = report.steps_markdown(machine, history.steps(RESULTS, machine))
    flags = {(line.split("`")[1], line.split("`")[3], line.split("`")[5]): line
             for line in text.splitlines() if line.startswith("- ") and ": regression (" in line}
    marked = {key: line[line.index("; ") + 2:line.index(" on both sides")] for key, line in flags.items()
              if "on both sides" in line}
    assert marked == {
        ("b1acdb2fd", "3c307b40f", "bench_device.RuntimeGetDevice.time_runtime_get_device('bindings')"):
            "cuda-bindings 13.3.1",
        ("3c307b40f", "73f808a6d", "bench_memory.PointerGetAttribute.time_pointer_get_attribute('bindings')"):
            "cuda-bindings 13.3.1",
        ("111c71329", "b1acdb2fd", "bench_event.EventRecord.time_event_record('cupy')"): "cupy-cuda13x 14.2.0"}
    # a cuda.bindings flag of that step is put down to its cuda-bindings wheel change, on the step's own line
    assert ("111c71329", "b1acdb2fd", "bench_launch.Launch.time_launch('bindings', '2 ptr')") not in flags
    (changed,) = [line for line in text.splitlines() if line.startswith("- `111c71329` → `b1acdb2fd`: the environment")]
    assert "(cuda-bindings 12.9.10 → 13.3.1)" in changed and "`bench_launch.Launch.time_launch('bindings', '2 ptr')`" \
        in changed




def test_the_h200_calibration_keeps_its_aa_silent_and_flags_the_spin_alone(machine):
    """Known answers on the H200's whole-suite paired runs with a layout per process (fixtures/paired: an A/A of
    main, and main against a build that adds a 24-turn spin to Device.set_current, one start): the A/A flags
    nothing of 102 cases and the spin only SetCurrent('core'), as recorded and re-judged under the machine's
    calibration in results/ (the thresholds the pull-request gate uses), which includes A/A runs of that
    kind."""
    thresholds = records.calibration(RESULTS / machine)
    spin = "bench_device.SetCurrent.time_set_current('core')"
    for name, expected in (("aa", {}), ("injected-spin24", {spin: "regression"})):
        data = paired_run(name)
        assert data["settings"]["layouts"] == "random" and len(paired.counted(data)) == 102
        assert {c["name"]: c["verdict"] for c in paired.counted(data) if c["verdict"] != "same"} == expected, name
        assert {c["name"]: v for c in paired.counted(data)
                if (v := stats.verdict(c["low"], c["high"], thresholds[c["name"]])) != "same"} == expected, name
    assert any(r["settings"]["layouts"] == "random" for r in records.read(RESULTS / machine, "calibration"))


def test_a_fresh_start_in_the_fast_state_joins_the_agreement(machine):
    """Known answers on the H200's two over-C++ runs of 21:16 and 21:17 UTC (one call, a fresh machine start):
    both in the fast state, 89 of 91 cases within 5% of each other, and they join the fast-state runs: 28 on
    sixteen starts, 314 of 366 cross-start pairs reach 90% of all cases, 364 of 366 over the cases whose twin
    held still. All on 2026-12-04: no pair on different days."""
    runs, everything = main_runs(machine, at("21:19"))
    new = runs[-2:]
    assert [r["date"][:16] for r in new] == [at("21:16"), at("21:17")]
    assert new[0]["host"]["start"] == new[1]["host"]["start"] not in {r["host"]["start"] for r in runs[:-2]}
    assert all(not overcpp_read.in_slow_state(x) for x in overcpp_read.slow_factors(new, everything))
    kept, counts = fast_state_agreement(runs)
    assert counts == (28, 16, 366, 314, 364)
    (pair,) = overcpp_read.agreement(new)
    assert (pair["same_start"], pair["agree"], pair["cases"]) == (True, 89, 91)
    assert {r["date"][:10] for r in kept} == {"2026-12-04"}


def test_a_mark_in_the_operations_table_comes_with_the_interval_it_rests_on():
    """▲ and ▼ are verdicts of the paired step to the commit: each is printed with that step's ratio and interval;
    a step that judged the case the same, or no step, adds nothing to asv's number."""
    step = {"ratio": 1.053, "low": 1.048, "high": 1.056}
    row = {"cells": {"core": {"value": 4.2e-7, "step": step | {"verdict": "regression"}},
                     "bindings": {"value": 1.1e-7, "step": step | {"verdict": "same"}},
                     "cupy": {"value": 3e-7,
                              "step": {"ratio": 0.9, "low": 0.88, "high": 0.92, "verdict": "improvement"}},
                     "cpp": {"value": 5e-8}}}
    assert report.cell_text(row, "core") == f"asv {fmt(4.2e-7)} ▲ ×1.053 [1.048, 1.056]"
    assert report.cell_text(row, "bindings") == f"asv {fmt(1.1e-7)}"
    assert report.cell_text(row, "cupy") == f"asv {fmt(3e-7)} ▼ ×0.900 [0.880, 0.920]"
    assert report.cell_text(row, "cpp") == f"asv {fmt(5e-8)}"


def test_the_results_page_is_what_report_markdown_makes_of_the_history(capsys):
    """docs/results.md is generated, never edited: `cuda-bench report --markdown --output docs/results.md` from the
    committed results/. A change of the report's words or of the history without it fails here."""
    from cuda_bench import cli

    assert cli.main(["report", "--markdown"]) == 0
    assert capsys.readouterr().out == (ROOT / "docs" / "results.md").read_text(), \
        "docs/results.md is stale: cuda-bench report --markdown --output docs/results.md"


def test_a_benchmark_the_suite_changed_since_its_numbers_says_so_instead_of_its_new_reason():
    """The ★ reasons come from today's suite, the numbers from the history: where asv's benchmarks.json holds
    another version of a benchmark than the suite has now, the row says its numbers predate the change."""
    from benchmarks.bench_memory import AllocFree

    name = "bench_memory.AllocFree.time_alloc_free"
    assert overview.suite_differs({name: AllocFree.version})[name] == AllocFree.differs
    changed = overview.suite_differs({name: "an-older-version"})[name]
    assert changed.startswith("these numbers are of an earlier version of this benchmark, which the suite has changed")
    assert changed.endswith(f"; the new version: {AllocFree.differs}")
    assert overview.suite_differs()[name] == AllocFree.differs  # no history to compare with


def process_record(cases, lost=None):
    """An over-C++ record of one commit holding ``cases`` ({name: per-process ratios over the twin})."""
    return {"date": "2026-12-06T00:00:00Z", "versions": {"cuda-bindings": "13.3.1"}, "lost": lost or {},
            "cases": [{"name": name, "py_ns": 100.0, "cpp_ns": 10.0, "processes": len(ratios), "version": None,
                       "process_ratios": ratios} for name, ratios in cases.items()]}


def test_each_form_is_compared_with_cuda_bindings_process_by_process():
    """forms_compared: each process times every form beside the same C++ twin, so a process's state (here each
    process up to twice as slow as another, both forms alike) cancels in the ratio of the two forms' ratios:
    cuda.core at ×0.750 with an interval of zero width. A run that lost a process of either form is not
    compared."""
    states = [10.0 + (7 * i) % 11 for i in range(60)]
    name = "bench_device.SetCurrent.time_set_current('{}')"
    record = process_record({name.format("bindings"): states, name.format("core"): [0.75 * r for r in states]})
    found = overcpp_read.forms_compared([record])
    core = found[name.format("core")]
    assert (core["ratio"], core["low"], core["high"], core["processes"]) == (pytest.approx(0.75),
                                                                              pytest.approx(0.75),
                                                                              pytest.approx(0.75), 60)
    assert "ratio" not in found[name.format("bindings")]  # the reference
    assert found[name.format("core")]["record"] == {"date": record["date"], "bindings": "13.3.1 wheel"}
    lost = process_record({name.format("bindings"): states, name.format("core"): [0.75 * r for r in states]},
                           lost={name.format("core"): "1 of 60 processes lost"})
    assert name.format("core") not in overcpp_read.forms_compared([lost])
    # the newest run that compared them is the one shown
    newer = process_record({name.format("bindings"): states, name.format("core"): [0.5 * r for r in states]})
    newer["date"] = "2026-12-07T00:00:00Z"
    assert overcpp_read.forms_compared([record, newer])[name.format("core")]["ratio"] == pytest.approx(0.5)


def test_the_front_page_compares_the_libraries_in_one_process_on_each_machine_and_names_each_build():
    """The committed history: Device.set_current on each machine shows cuda.core's and CuPy's time over
    cuda.bindings', paired in one process, with its interval, and which cuda-bindings that run had; where asv's
    medians ran another build (the H200: its over-C++ runs had the 13.3.1 wheel, its asv run cuda_bindings built
    from cb56ab9f9), the page says so."""
    found = read.load(RESULTS)
    for name in found.machines:
        rows = [r for r in found.rows if r["machine"] == name]
        (row,) = [r for r in rows if r["benchmark"] == "bench_device.SetCurrent.time_set_current"]
        page = landing_page.render(rows)
        for api in ("core", "cupy"):
            one = row["cells"][api]["one_process"]
            assert one["low"] <= one["ratio"] <= one["high"] and one["processes"] >= 40
            assert f'<small class="vs-bindings">{interval(one)}</small>' in page
        built = row["cells"]["core"]["one_process"]["record"]["bindings"]
        assert f'<span class="build">cuda-bindings {built}</span>' in page
        assert f'<span class="build">{row["build"]}</span>' in page
        assert ("Another build than asv's medians" in page) == (built != row["build"])
    h200 = [r for r in found.rows if r["machine"] == "nvidia-h200"]
    assert "Another build than asv's medians" in landing_page.render(h200)


def test_the_pages_say_which_thresholds_judged_each_machine_and_claim_no_calibration_not_used():
    """Each machine's part of the front page says what its verdicts were judged against: the default 2 % where no
    A/A run calibrated it; a calibration where one did, and that steps which used the default alone did so (the
    H100's first steps were paired before its A/A runs reached their results folder: every threshold 2 %; its windows
    after them took the window A/A run's)."""
    def step(*thresholds):
        return step_record(cases=[step_case(f"bench_x.X.time_x('{i}')", 1.0, "same") | {"threshold": t}
                                  for i, t in enumerate(thresholds)])

    calibrated, flat = step(0.01, 0.013), step(stats.DEFAULT_THRESHOLD, stats.DEFAULT_THRESHOLD)
    calibration = [{"date": "2026-12-03T00:00:00Z", "thresholds": {"bench_x.X.time_x('0')": 0.01}}]
    assert summary.thresholds_words([flat], []) == "the default 2% for every case: no A/A run has calibrated this " \
                                                   "machine"
    assert summary.thresholds_words([calibrated], calibration) == "calibrated per case by an A/A run on this " \
        "machine (2026-12-03; 1 cases, any other the default 2%)"
    assert summary.thresholds_words([calibrated, flat], calibration).endswith(
        "; 1 of the 2 paired steps shown were judged with the default 2% alone")
    found = read.load(RESULTS)
    h100 = found.machines["nvidia-h100-80gb-hbm3"]
    alone = [s for s in h100.steps if all(c["threshold"] == stats.DEFAULT_THRESHOLD for c in s["cases"])]
    assert 0 < len(alone) < len(h100.steps)
    page = landing_page.document(found)
    assert f"Thresholds: {h100.thresholds}." in page
    assert h100.thresholds.startswith("calibrated per case by an A/A run on this machine (2026-12-06; ")
    assert re.search(r"; \d+ of the \d+ paired steps shown were judged with the default 2% alone$", h100.thresholds)


def test_a_step_built_by_two_compilers_says_so_beside_what_it_was_built_from():
    """The Steps page and README say what a step's builds differ by; two compilers of one package are part of it."""
    from cuda_bench.publish import summary

    gcc12 = {"compiler": "gcc (Debian 12.2.0-14) 12.2.0", "cython": "3.2.9"}
    step = {"packages_changed": ["cuda_core"],
            "built_from": {"base": {"cuda_core": "a", "cuda_pathfinder": "p"},
                           "head": {"cuda_core": "b", "cuda_pathfinder": "p"}},
            "compiled_by": {"base": {"cuda_core": gcc12}, "head": {"cuda_core": dict(gcc12, compiler="gcc 13.3.0")}}}
    assert summary.built_from_words(step) == (
        "cuda_core differs; cuda_pathfinder the same; cuda_core compiled by gcc (Debian 12.2.0-14) 12.2.0 with Cython "
        "3.2.9 at the base and gcc 13.3.0 with Cython 3.2.9 at the head")
    assert summary.built_from_words(step | {"compiled_by": {"base": {"cuda_core": gcc12}, "head": {}}}) == (
        "cuda_core differs; cuda_pathfinder the same")  # a side that does not say: nothing to tell
