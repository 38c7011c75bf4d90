"""Cold starts (benchmarks/_coldstart.py): a fresh process net of the empty one, on the clock asv and the paired
worker both read; paired in the first ``cold_pairs`` process pairs; what ``import cuda.core`` imports, and how two
builds' imports differ (cuda_bench.run.imports). Real processes, real cuda-core releases from PyPI, no GPU."""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import RELEASES, RUNNER, make_env  # also puts the project on sys.path

from benchmarks import _coldstart as cold
from cuda_bench.compare import comment, paired, window
from cuda_bench.compare import settings as settings_module
from cuda_bench.foundations import stats
from cuda_bench.run import imports, worker

IMPORT = "bench_coldstart.Import.time_import('{}')"
FIRST_CONTEXT = "bench_coldstart.FirstContext.time_first_context('{}')"
CPP = "bench_cpp.FirstContext.time_first_context('cpp')"
ROOT = Path(__file__).resolve().parents[1]


# --- the net of the empty process ---------------------------------------------------------------------------------
def test_a_cold_start_is_its_process_less_the_empty_one_on_the_clock_asv_and_the_worker_read():
    lasted = {"statement": 150_000_000, "pass": 40_000_000}  # ns, what each process took

    def run(argv, env):
        return lasted[argv[-1]]

    from benchmarks.bench_coldstart import FirstContext, Import
    from benchmarks.bench_cpp import FirstContext as CppFirstContext

    before_ns, before_s = cold.net_clock_ns(), Import.timer()
    assert cold.net_sample(["python", "statement"], ["python", "pass"], run=run) == 110_000_000
    assert cold.net_sample(["python", "statement"], ["python", "pass"], run=run) == 110_000_000
    assert cold.net_clock_ns() - before_ns == 220_000_000
    assert Import.timer() - before_s == pytest.approx(0.22)  # asv's seconds, on the same clock
    for cls in (Import, FirstContext, CppFirstContext):  # the worker's clock and asv's are the one clock
        assert cls.clock_ns is cold.net_clock_ns and cls.timer is cold.net_clock and cls.number == 1


def test_a_failed_process_is_an_error_with_its_last_words_and_the_child_leaves_the_tools_path(monkeypatch, tmp_path):
    with pytest.raises(cold.StartFailed, match="no cuda here"):
        cold.wall_ns([sys.executable, "-c", "import sys; sys.exit('no cuda here')"])
    assert cold.wall_ns([sys.executable, "-c", "pass"]) > 0
    tool = tmp_path / "tool"
    (tool / "cuda_bench").mkdir(parents=True)
    monkeypatch.setenv("PYTHONPATH", f"{tool}:{tmp_path / 'users'}")
    assert cold.child_env()["PYTHONPATH"] == str(tmp_path / "users")
    monkeypatch.setenv("PYTHONPATH", str(tool))
    assert "PYTHONPATH" not in cold.child_env()


@pytest.mark.skipif(cold.cpp_compiler() is None, reason="no C++ compiler here")
def test_the_cpp_twins_program_builds_without_cuda_and_says_why_it_cannot_start_a_context(tmp_path, monkeypatch):
    monkeypatch.setattr(cold, "CPP_CACHE", tmp_path)
    program = str(cold.cpp_program())
    assert cold.cpp_program() == cold.cpp_program()  # cached by the source's and the compiler's hash
    assert subprocess.run([program, "pass"]).returncode == 0  # the empty process it is timed against
    done = subprocess.run([program], capture_output=True, text=True)
    if done.returncode == 3:  # no driver or no GPU here: what the case would skip for
        assert done.stderr.startswith(("no CUDA driver here", "no usable GPU here"))
    else:
        assert done.returncode == 0


# --- the worker and the paired engine -------------------------------------------------------------------------------
PROBE = '''
"""Cold starts of known net cost: each body advances the clock by COLD_NS (the side's), as a real one adds its net."""
import os
import time

_CLOCK = [0]


def clock_ns():
    return _CLOCK[0]


class Cold:
    params = [["py"]]
    param_names = ["api"]
    unroll = 1
    number = 1
    clock_ns = staticmethod(clock_ns)

    def setup(self, api):
        step = int(os.environ["COLD_NS"])

        def body():
            _CLOCK[0] += step

        self.body = body

    def time_cold(self, api):
        self.body()


class FirstContext(Cold):
    """A first context by its name (names.is_first_context): each body also leaves a mark in BODIES, if set."""

    def setup(self, api):
        super().setup(api)
        counted, marks = self.body, os.environ.get("BODIES")

        def body():
            counted()
            if marks:
                with open(marks, "a") as f:
                    f.write(".")
            if os.environ.get("TIMES"):  # when each first context ran
                with open(os.environ["TIMES"], "a") as f:
                    f.write(f"first {time.time()}\\n")

        self.body = body

    def time_first_context(self, api):
        self.body()


class Warm:
    params = [["py"]]
    param_names = ["api"]

    def setup(self, api):
        self.body = lambda: time.sleep(0)
        if os.environ.get("TIMES"):  # when each other case began
            with open(os.environ["TIMES"], "a") as f:
                f.write(f"other {time.time()}\\n")

    def time_warm(self, api):
        self.body()
'''
COLD, WARM = "bench_coldstart.Cold.time_cold('py')", "bench_warm.Warm.time_warm('py')"
FIRST = "bench_coldstart.FirstContext.time_first_context('py')"


@pytest.fixture
def probe(tmp_path):
    suite = tmp_path / "coldprobe"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "bench_coldstart.py").write_text(PROBE)  # a cold start by its module's name (names.is_cold_start)
    (suite / "bench_warm.py").write_text(PROBE.replace("class Cold", "class _Cold").replace("(Cold)", "(_Cold)")
                                         .replace("class FirstContext", "class _FirstContext"))
    return suite


def test_the_worker_times_a_case_on_its_own_clock_one_body_a_sample_and_does_not_count_it(probe, monkeypatch):
    monkeypatch.setenv("COLD_NS", "1234")
    timed = worker.Worker(probe)
    assert timed.setup({"case": COLD}) == {"ok": True, "unroll": 1, "number": 1}
    assert timed.sample({"n": 3}) == {"ns": 3 * 1234}  # the clock's advance, not the wall time
    timed.teardown({})
    assert timed.setup({"case": WARM})["number"] is None  # the others: calibrated, on perf_counter_ns
    assert timed.count({"case": COLD}) == {"skip": worker.COLD_COUNT}


def sides(probe_costs):
    return [paired.Side(f"s{i}", f"r{i}", f"c{i}", sys.executable, {"COLD_NS": str(ns)})
            for i, ns in enumerate(probe_costs)]


@pytest.mark.slow
def test_a_cold_start_is_paired_in_the_first_cold_pairs_and_a_ten_percent_change_is_flagged(probe, tmp_path):
    settings = paired.Settings(pairs=8, cold_pairs=6, seconds=0, benchmark_dir=probe)
    base, head = sides([1000, 1100])
    report = paired.run([base, head], [COLD, WARM], settings, tmp_path / "logs", progress=lambda m: None)
    found = {case.name: case for case in report.cases}
    assert len(found[COLD].pairs) == 6 and len(found[WARM].pairs) == 8
    assert (found[COLD].ratio, found[COLD].low, found[COLD].high) == (1.1, 1.1, 1.1)
    assert found[COLD].verdict == "regression" and found[COLD].calls == 1


@pytest.mark.slow
def test_a_window_pairs_cold_starts_as_steps_aa_silent_and_the_change_at_its_step(probe, tmp_path):
    settings = paired.Settings(pairs=8, cold_pairs=6, seconds=0, benchmark_dir=probe)
    found = window.run(sides([1000, 1000, 1250]), [COLD, WARM], settings, tmp_path / "logs", progress=lambda m: None)
    aa, change = ({c.name: c for c in step.cases}[COLD] for step in found.steps)
    assert (aa.ratio, aa.verdict, len(aa.pairs)) == (1.0, "same", 6)
    assert (change.ratio, change.verdict) == (1.25, "regression")
    # each build's numbers (asv's) from the six groups that timed it: per group a warm-up turn, then rounds
    assert {len(side.samples[COLD]) for side in found.per_side} == {6 * 2 * settings.min_groups}
    assert {s for side in found.per_side[:2] for s in side.samples[COLD]} == {1000}


@pytest.mark.slow
def test_a_first_context_takes_an_intervals_fewest_pairs_and_one_spare_one_group_each_no_warm_up(probe, tmp_path):
    settings = paired.Settings(pairs=9, cold_pairs=8, seconds=0.05, benchmark_dir=probe)
    assert settings.first_context_pairs == stats.fewest_pairs() + 1  # 6: the extremes of 6 cover 96.9 %; one spare
    marks = [tmp_path / f"bodies{i}" for i in range(3)]
    builds = sides([1000, 1000, 1250])
    for side, mark in zip(builds, marks):
        side.env["BODIES"] = str(mark)
    found = window.run(builds, [FIRST, COLD], settings, tmp_path / "logs", progress=lambda m: None)
    aa, change = ({c.name: c for c in step.cases} for step in found.steps)
    assert len(aa[FIRST].pairs) == 7 and len(aa[COLD].pairs) == 8
    assert (aa[FIRST].verdict, change[FIRST].ratio, change[FIRST].verdict) == ("same", 1.25, "regression")
    # one ABBA round a group (two samples a build), and no warm-up turn: every body run is a sample kept
    assert {len(side.samples[FIRST]) for side in found.per_side} == {7 * 2}
    assert [len(m.read_text()) for m in marks] == [7 * 2] * 3


def test_a_windows_estimate_adds_the_first_contexts_one_at_a_time_whatever_the_cores():
    """Two samples a build and pair, FIRST_CONTEXT_SAMPLE each, for a first context; nothing for another cold start."""
    settings = paired.Settings(pairs=45, cold_pairs=15)
    one = settings.first_contexts_seconds([FIRST, COLD], builds=3)
    assert one == pytest.approx(2 * settings.first_context_pairs * 3 * settings_module.FIRST_CONTEXT_SAMPLE)
    assert settings.first_contexts_seconds([COLD], builds=3) == 0
    assert settings.first_contexts_seconds([FIRST, FIRST], builds=3) == pytest.approx(2 * one)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["paired", "window"])
def test_the_engines_time_the_first_contexts_after_every_other_case_with_nothing_beside_them(probe, tmp_path,
                                                                                              engine):
    """Beside other cases' GPU work a first context's interval spanned x0.5 to x2 on the H100: both engines measure
    every other case first, then the first contexts, one process pair or group at a time."""
    times = tmp_path / "times"
    builds = sides([1000, 1000])
    for side in builds:
        side.env["TIMES"] = str(times)
    settings = paired.Settings(pairs=9, cold_pairs=8, seconds=0.02, benchmark_dir=probe)
    run = paired.run if engine == "paired" else window.run
    found = run(builds, [FIRST, WARM, COLD], settings, tmp_path / "logs", progress=lambda m: None)
    cases = found.cases if engine == "paired" else found.steps[0].cases
    assert {c.name: len(c.pairs) for c in cases} == {FIRST: 7, WARM: 9, COLD: 8}
    seen = [line.split() for line in times.read_text().splitlines()]
    firsts = [float(t) for what, t in seen if what == "first"]
    others = [float(t) for what, t in seen if what == "other"]
    assert len(firsts) == 7 * 2 * 2 and len(others) >= 9 * 2 and max(others) < min(firsts)
    assert (tmp_path / "logs" / "first-contexts").is_dir()


@pytest.mark.slow
def test_first_contexts_whose_every_pair_fails_are_their_errors_and_the_other_cases_stay_measured(probe, tmp_path):
    """The first contexts' phase comes after the rest: when each of its pairs fails (here none can write its log),
    what the first phase measured stands, and the first contexts say why they were not."""
    def make_worker(side, core, settings, log):
        if "first-contexts" in str(log):
            raise OSError(f"cannot write {log}")
        return paired.Worker(side, core, settings, log)

    settings = paired.Settings(pairs=8, cold_pairs=6, seconds=0.02, benchmark_dir=probe)
    report = paired.run(sides([1000, 1000]), [FIRST, WARM], settings, tmp_path / "logs", progress=lambda m: None,
                        make_worker=make_worker)
    assert [c.name for c in report.cases] == [WARM] and "cannot write" in report.errors[FIRST]


def test_first_contexts_run_one_at_a_time_on_the_machine_and_the_wait_is_not_timed(tmp_path, monkeypatch):
    """Three first contexts at once: two of a 0.5 s process against a 0.3 s empty one, one of a 0.5 s Python
    statement against `pass`. They run one after another, each with its empty process inside the lock, and each is
    timed as if alone; other cold starts take no lock."""
    monkeypatch.setattr(cold, "GPU_LOCK", tmp_path / "first-context.lock")
    sleeper = [sys.executable, "-c", "import time; time.sleep(0.5)"]
    empty = [sys.executable, "-c", "import time; time.sleep(0.3)"]
    body = cold.python_sample("import time; time.sleep(0.5)", first_context=True)
    start = time.perf_counter()
    with ThreadPoolExecutor(3) as pool:
        timed = [pool.submit(cold.net_sample, sleeper, empty, first_context=True) for _ in range(2)]
        pool.submit(body)
    took = [t.result() for t in timed]
    assert time.perf_counter() - start > 2 * (0.5 + 0.3) + 0.5  # one after another, both processes of each
    assert all(0.1e9 < ns < 0.2e9 + 0.3e9 for ns in took)  # 0.5 s less 0.3 s: its own, not the others' too
    start = time.perf_counter()
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda _: cold.net_sample(sleeper, empty), range(3)))
    assert time.perf_counter() - start < 2 * (0.5 + 0.3)  # the other cold starts hold no lock


def test_the_lock_is_the_machines_not_a_commands_own_temporary_folder(tmp_path):
    """Each cuda-bench command runs with a TMPDIR of its own: the lock's path does not follow it."""
    script = "from benchmarks import _coldstart as c; print(c.GPU_LOCK)"
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    said = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT)
    assert said.stdout.strip() == "/tmp/cuda-bench-first-context.lock", said.stderr


@pytest.mark.slow
def test_real_releases_import_without_a_gpu_and_the_cases_that_need_the_driver_say_why_they_skip(tmp_path):
    base = paired.Side("base", "0.5.1", "0.5.1", str(make_env(RELEASES["0.5.1"] + RUNNER)))
    head = paired.Side("head", "1.2.2", "1.2.2", str(make_env(RELEASES["1.2.2"] + RUNNER)))
    names = [IMPORT.format("pathfinder"), FIRST_CONTEXT.format("core"), CPP,
             "bench_coldstart.DriverLoad.time_driver_load('pathfinder')", IMPORT.format("cupy")]
    settings = paired.Settings(pairs=6, seconds=0.01)
    report = paired.run([base, head], names, settings, tmp_path / "logs", progress=lambda m: None)
    (measured,) = report.cases
    assert measured.name == IMPORT.format("pathfinder") and len(measured.pairs) == 6
    assert measured.base_ns > 0 and measured.head_ns > 0  # a fresh interpreter's import, net of `pass`
    assert report.errors == {}
    assert report.skipped[FIRST_CONTEXT.format("core")].startswith("no CUDA driver here")
    assert report.skipped[CPP].startswith("no CUDA driver here")
    assert "cannot load the CUDA driver" in report.skipped["bench_coldstart.DriverLoad.time_driver_load('pathfinder')"]
    assert "CuPy is not importable here" in report.skipped[IMPORT.format("cupy")]


@pytest.mark.slow
def test_a_wheels_cuda_core_is_imported_by_its_own_name_though_it_takes_its_cu13_subpackages_globals():
    """A cuda-core wheel copies ``cuda.core.cu13``'s globals into ``cuda.core``, ``__name__`` with them: the fresh
    processes import ``cuda.core`` as its users do, and the first context's import runs (``cuda.core.cu13``
    holds no ``Device``)."""
    python = make_env(RELEASES["1.2.2"] + RUNNER)
    script = ("import cuda.core, benchmarks.bench_coldstart as c\n"
              "print(cuda.core.__name__)\nprint(c.Import().core())\nprint(c.FirstContext().core())")
    said = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    name, imported, first_context = said.stdout.split("\n", 2)
    assert name == "cuda.core.cu13"  # the wheel's own doing, which the cases must not follow
    assert imported == "import cuda.core"
    assert first_context.startswith("from cuda.core import Device\n")
    statement = first_context.split("\n")[0]
    subprocess.run([str(python), "-c", statement], check=True, cwd="/")


# --- what import cuda.core imports -------------------------------------------------------------------------------
IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       300 |        300 |   site
import time:        50 |         50 |     json.scanner
import time:       120 |        170 |   json.decoder
import time:        80 |        250 | json
import time:        40 |         40 |       asyncio.events
import time:       900 |        940 |     asyncio.base_events
import time:      1000 |       1940 |   asyncio
import time:       200 |       2140 | fakecore
unrelated line
"""


def test_importtime_is_read_as_modules_with_their_depth_times_and_importer():
    modules = imports.parse(IMPORTTIME)
    assert modules[0] == ("site", 1, 300, 300) and modules[-1] == ("fakecore", 0, 200, 2140) and len(modules) == 8
    parent = imports.importers(modules)
    assert parent["json.scanner"] == "json.decoder" and parent["json.decoder"] == "json"
    assert parent["asyncio.events"] == "asyncio.base_events" and parent["asyncio"] == "fakecore"
    assert parent["json"] is None and parent["fakecore"] is None
    # what `python -c pass` imports is left out; each module keeps its fastest of the runs
    slower_run = [(n, d, s * 2, c * 2) for n, d, s, c in modules]
    kept = imports.fastest([slower_run, modules], startup=["site"])
    assert [m[0] for m in kept] == [m[0] for m in modules[1:]] and kept[-1] == ["fakecore", 0, 200, 2140]


def fake(modules):
    return {"statement": "import fakecore", "runs": 5, "modules": [list(m) for m in modules],
            "count": len(modules), "total_us": sum(m[3] for m in modules if m[1] == 0)}


def test_the_diff_names_each_added_subtree_by_its_first_module_and_the_modules_that_got_slower():
    after = imports.parse(IMPORTTIME)
    before = [m for m in after if not m[0].startswith("asyncio")]
    before = [(n, d, 400 if n == "json.decoder" else s, c) for n, d, s, c in before]  # 400 -> 120: faster
    found = imports.diff(fake(before), fake(after))
    assert found["added"] == [("asyncio", 3, 1940)]
    assert found["slower"] == [] and found["removed"] == []
    assert imports.diff(fake(after), fake(before))["removed"] == [("asyncio", 3, 1940)]
    slowed = [(n, d, s + 600 if n == "json" else s, c) for n, d, s, c in after]
    assert imports.diff(fake(after), fake(slowed))["slower"] == [("json", 80, 680)]
    barely = [(n, d, s + 400 if n == "json" else s, c) for n, d, s, c in after]  # 5x, but under 0.5 ms
    assert imports.diff(fake(after), fake(barely))["slower"] == []


def test_an_eager_import_added_to_a_package_is_named_by_a_real_importtime(tmp_path):
    """Two builds of a package, the second importing asyncio eagerly: measured in fresh interpreters, the diff names
    asyncio as what the change added, and the comment says so."""
    found = {}
    for name, extra in (("base", ""), ("head", "import asyncio\n")):
        folder = tmp_path / name / "fakecore"
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text(f"import json\n{extra}")
        env = {"PYTHONPATH": str(folder.parent), "PATH": "/usr/bin:/bin"}
        found[name] = imports.measure(sys.executable, env=env, runs=2, statement="import fakecore")
    assert "json" in {m[0] for m in found["base"]["modules"]}
    assert "encodings" not in {m[0] for m in found["base"]["modules"]}  # the interpreter's own start: left out
    added = imports.diff(found["base"], found["head"])["added"]
    assert added[0][0] == "asyncio" and added[0][1] > 1
    assert {name for name, _, _ in added} <= {"asyncio", "ssl", "concurrent", "concurrent.futures"}
    text = "\n".join(comment.imports_section({"imports": found}))
    assert "Added: `asyncio`" in text and "unpaired" in text
    failed = comment.imports_section({"imports": {"base": found["base"], "head": {"error": "no cuda.core"}}})
    assert failed[-1] == "Not measured: head: no cuda.core"


def test_a_build_that_cannot_import_cuda_core_is_said_in_one_line(tmp_path):
    with pytest.raises(imports.ImportsError, match="cannot import cuda.core"):
        imports.statement_of(sys.executable, env={"PYTHONPATH": str(tmp_path), "PYTHONNOUSERSITE": "1",
                                                  "PATH": "/usr/bin:/bin"})


@pytest.mark.slow
def test_two_real_releases_imports_differ_by_the_modules_one_of_them_has(tmp_path):
    older = imports.measure(make_env(RELEASES["0.5.1"] + RUNNER), runs=2)
    newer = imports.measure(make_env(RELEASES["1.2.2"] + RUNNER), runs=2)
    assert older["statement"] == newer["statement"] == "import cuda.core"
    names = [{m[0] for m in found["modules"]} for found in (older, newer)]
    assert newer["count"] == len(names[1]) and "cuda.core" in names[1]
    added = imports.diff(older, newer)["added"]
    assert added and all(name in names[1] - names[0] for name, _, _ in added)
    assert sum(count for _, count, _ in imports.diff(older, newer, shown=1000)["added"]) == len(names[1] - names[0])
    old = make_env(RELEASES["0.3.2"] + RUNNER)  # before cuda-core 0.5: what its users import
    assert imports.statement_of(old) == "import cuda.core.experimental"

