"""The work per call (``cuda_bench.foundations.counts``, the worker's ``count`` request, ``cuda-bench counts``): exact
counts after the warm-up, divided by the calls actually counted, the same in two processes, a change of one Python call
read as exactly +1 in that case alone, and the known difference between two real cuda-core releases.

There is no GPU here (no libcuda): CUPTI cannot start, so CUDA calls are None with the reason; what CUPTI's
callbacks are made into (names, counts per call, only inside the count) is checked with a stand-in for
cupti-python that calls back as CUPTI does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import NEWEST_WITH_NVRTC, ROOT, RUNNER, make_env

from cuda_bench.commands import counts as counts_command
from cuda_bench.compare import comment, countpass, gate, paired, summaries
from cuda_bench.foundations import counts
from cuda_bench.results import counts_read, records

STAND_IN = '''
import os

from benchmarks._op import unrolled

INJECT = os.environ.get("INJECT") == "1"


def helper():
    return 1


def two_calls():
    """Two Python calls (itself, helper) and one C call (len) per call."""
    helper()
    return len("ab")


class Known:
    params = [["py"]]
    param_names = ["api"]
    unroll = 7  # 20 calls asked for: 3 bodies, 21 calls counted

    def setup(self, api):
        self.body = unrolled(two_calls, (), None, self.unroll)

    def time_known(self, api):
        self.body()


CACHE = {}


def fill_once():
    """The first call fills a cache (more calls, blocks that stay); every later call only looks it up."""
    if not CACHE:
        CACHE.update((str(i), [helper()]) for i in range(50))
    return CACHE["7"]


class FirstCallFills:
    params = [["py"]]
    param_names = ["api"]
    unroll = 5

    def setup(self, api):  # no call of its own here: the worker's warm-up must leave the first call out
        self.body = unrolled(fill_once, (), None, self.unroll)

    def time_first_call_fills(self, api):
        self.body()


class Node:
    __slots__ = ("before", "extra")

    def __init__(self, before, extra):
        self.before, self.extra = before, extra


class Leaky:
    """Each call keeps two small blocks for good: a Node and an object (neither from a free list)."""
    params = [["py"]]
    param_names = ["api"]
    unroll = 7

    def setup(self, api):
        self.kept = None
        self.body = unrolled(self.keep, (), None, self.unroll)

    def keep(self):
        self.kept = Node(self.kept, object())

    def time_leaky(self, api):
        self.body()


def extra():
    pass


def maybe_injected():
    if INJECT:
        extra()
    return helper()


class Injected:
    params = [["py"]]
    param_names = ["api"]
    unroll = 10

    def setup(self, api):
        self.body = unrolled(maybe_injected, (), None, self.unroll)

    def time_injected(self, api):
        self.body()


class Queued:
    """Enqueues as a launch does; the count must drain between batches, outside the count."""
    params = [["py"]]
    param_names = ["api"]
    queued = True
    number = 10
    unroll = 1

    def setup(self, api):
        self.queue, self.deepest = [], 0
        self.body = unrolled(self.enqueue, (), None, 1)
        self.drain = self.empty

    def enqueue(self):
        self.queue.append(1)
        self.deepest = max(self.deepest, len(self.queue))

    def empty(self):
        self.queue.clear()

    def teardown(self, api):
        with open(os.environ["QUEUE_LOG"], "a") as f:
            f.write(f"{self.deepest}\\n")

    def time_queued(self, api):
        self.body()


class CudaCalls:
    """Calls the (stand-in) CUDA driver: cuCtxGetCurrent twice and cuEventCreate once per call."""
    params = [["py"]]
    param_names = ["api"]
    unroll = 3

    def setup(self, api):
        try:
            from cupti import fake_driver
        except ImportError:
            raise NotImplementedError("no stand-in CUPTI here")
        fake_driver("cuInit")  # outside any count: not counted
        self.body = unrolled(self.op, (fake_driver,), None, self.unroll)

    @staticmethod
    def op(driver):
        driver("cuCtxGetCurrent")
        driver("cuEventCreate")
        driver("cuCtxGetCurrent")

    def time_cuda_calls(self, api):
        self.body()


class Absent:
    params = [["py"]]
    param_names = ["api"]

    def setup(self, api):
        raise NotImplementedError("this build has no such call")

    def time_absent(self, api):
        pass
'''

#: a stand-in for cupti-python: ``from cupti import cupti`` with the callback API's calls, and ``fake_driver``, a
#: "driver API" that calls the subscriber back on entry and exit while its domain is enabled, as CUPTI does
FAKE_CUPTI = '''
import enum

NAMES = {"cuInit": 1, "cuCtxGetCurrent": 17, "cuEventCreate": 245}


class cupti:
    class CallbackDomain(enum.IntEnum):
        DRIVER_API = 1
        RUNTIME_API = 2

    class ApiCallbackSite(enum.IntEnum):
        API_ENTER = 0
        API_EXIT = 1

    subscribers = []
    enabled = set()

    @classmethod
    def subscribe(cls, callback, userdata):
        cls.subscribers.append((callback, userdata))
        return len(cls.subscribers)

    @classmethod
    def enable_domain(cls, enable, subscriber, domain):
        (cls.enabled.add if enable else cls.enabled.discard)(int(domain))

    @staticmethod
    def get_callback_name(domain, cbid):
        return {v: k for k, v in NAMES.items()}[cbid]


class Data:
    def __init__(self, site):
        self.callback_site = site


def fake_driver(name):
    if cupti.CallbackDomain.DRIVER_API in cupti.enabled:
        for site in (0, 1):
            for callback, userdata in cupti.subscribers:
                callback(userdata, cupti.CallbackDomain.DRIVER_API, NAMES[name], Data(site))
'''


@pytest.fixture
def stand_in(tmp_path):
    suite = tmp_path / "standin"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "bench_work.py").write_text(STAND_IN)
    return suite


def names_of(*classes):
    snake = {"Known": "known", "FirstCallFills": "first_call_fills", "Leaky": "leaky", "Injected": "injected",
             "Queued": "queued", "CudaCalls": "cuda_calls", "Absent": "absent"}
    return [f"bench_work.{c}.time_{snake[c]}('py')" for c in classes]


def count(suite, tmp_path, names, env=None, python=sys.executable, calls=20, slow_calls=20, rev="a"):
    side = paired.Side("head", rev, rev, str(python), {"QUEUE_LOG": str(tmp_path / "queue.log"), **(env or {})})
    return countpass.count_side(side, names, calls=calls, slow_calls=slow_calls,
                                benchmark_dir=suite, log_dir=tmp_path / "logs",
                                progress=lambda m: None)


def by_name(record):
    return {c["name"]: c for c in record["cases"]}


def test_counts_are_exact_per_call_after_the_warm_up(stand_in, tmp_path):
    """Known: 2 Python calls and 1 C call per call, over 21 calls (20 asked for, in whole bodies of 7): divided by
    the 21 counted, not the 20 asked. FirstCallFills: its first call's cache is left out by the warm-up, so both
    counted runs agree (none unsteady) and a call is one Python call, no C call, no block kept. Leaky: two blocks kept
    per call. Queued: drained between batches, never deeper than one batch, and the drain is not counted."""
    record = count(stand_in, tmp_path, names_of("Known", "FirstCallFills", "Leaky", "Queued", "Absent"))
    found = by_name(record)
    known, fills, leaky, queued = (found[n] for n in names_of("Known", "FirstCallFills", "Leaky", "Queued"))
    assert record["mechanism"] == counts.python_mechanism()
    assert (known["calls"], known["python_calls"], known["net_blocks"], known["unsteady"]) == (21, 2, 0, [])
    assert (fills["calls"], fills["python_calls"], fills["net_blocks"], fills["unsteady"]) == (20, 1, 0, [])
    assert (leaky["calls"], leaky["net_blocks"], leaky["python_calls"], leaky["unsteady"]) == (21, 2, 2, [])
    assert (queued["calls"], queued["python_calls"], queued["unsteady"]) == (20, 1, [])
    if record["mechanism"] == "sys.setprofile":  # 'c_call': builtins only
        # object() and Node() are types, not builtins: no c_call
        assert (known["c_calls"], fills["c_calls"], leaky["c_calls"], queued["c_calls"]) == (1, 0, 0, 3)
    deepest = {int(line) for line in (tmp_path / "queue.log").read_text().split()}
    assert deepest == {10}, "a batch is one sample of the queued operation, drained after it"
    assert record["skipped"] == {names_of("Absent")[0]: "this build has no such call"} and not record["errors"]
    assert record["cuda_counted"] is False and "cupti-python is not installed" in record["cuda_why"]
    assert all(c["cuda"] is None and c["nvrtc"] == {} for c in record["cases"])
    assert records.check(records.stamped(record, "counts"), "counts")  # the shape counts.jsonl takes


def test_per_call_is_the_total_over_the_calls_counted():
    assert counts.plan(7, 20) == (3, 3) and counts.plan(100, 100) == (1, 1) and counts.plan(1, 10, batch=4) == (12, 4)
    assert counts.per_call(42, 21) == 2 and isinstance(counts.per_call(42, 21), int)
    assert counts.per_call(1, 3) == 0.333333 and counts.per_call(-5, 100) == -0.05


def test_warm_up_and_runs_in_one_process():
    """count_work itself: without the warm-up a first call that fills a cache makes the two runs disagree."""
    cache = []

    def op():
        if not cache:
            cache.extend(object() for _ in range(10))
        return len(cache)

    def body():  # the body's own call is the harness's (as around a body that does nothing): op's is counted
        op()

    warm = counts.count_work(body, calls=5, cuda=False)
    assert (warm["python_calls"], warm["net_blocks"], warm["unsteady"]) == (1, 0, [])
    cache.clear()
    cold = counts.count_work(body, calls=5, cuda=False, warmup=False)
    assert cold["unsteady"] == ["net_blocks"]  # the first count (blocks) counted the fill in its first run
    assert (cold["python_calls"], cold["net_blocks"]) == (1, 0)  # per call: the second run


def test_two_processes_count_the_same(stand_in, tmp_path):
    """A/A: every count of every case, in two fresh worker processes, identical."""
    names = names_of("Known", "FirstCallFills", "Leaky", "Injected", "Queued")
    first, second = (count(stand_in, tmp_path / str(i), names) for i in (1, 2))
    assert first["cases"] == second["cases"] and len(first["cases"]) == len(names)
    assert counts_read.diff(first, second) == {}


def test_one_more_python_call_reads_plus_one_in_that_case_alone(stand_in, tmp_path):
    names = names_of("Known", "FirstCallFills", "Leaky", "Injected", "Queued")
    sides = [paired.Side("base", "a", "a", sys.executable, {"QUEUE_LOG": str(tmp_path / "q"), "INJECT": "0"}),
             paired.Side("head", "b", "b", sys.executable, {"QUEUE_LOG": str(tmp_path / "q"), "INJECT": "1"})]
    found = countpass.measure(sides, names, log_dir=tmp_path / "logs", progress=lambda m: None,
                              benchmark_dir=stand_in, calls=20)
    injected = names_of("Injected")[0]
    assert counts_read.diff(found["base"], found["head"]) == {injected: "`Injected('py')`: +1 Python calls"}
    assert "- `Injected('py')`: +1 Python calls" in counts_read.diff_markdown(found["base"], found["head"])


def test_cupti_callbacks_become_calls_by_name_per_call_inside_the_count_only(stand_in, tmp_path):
    """With a stand-in for cupti-python that calls back as CUPTI does (on entry and exit of each API call, only
    while its domain is enabled): two cuCtxGetCurrent and one cuEventCreate per call, the cuInit of setup not
    counted, nothing for a case that makes no CUDA call."""
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "cupti.py").write_text(FAKE_CUPTI)
    record = count(stand_in, tmp_path, names_of("CudaCalls", "Known"), env={"PYTHONPATH": str(fake)})
    found = by_name(record)
    calls, known = found[names_of("CudaCalls")[0]], found[names_of("Known")[0]]
    assert calls["cuda"] == {"cuCtxGetCurrent": 2, "cuEventCreate": 1} and calls["unsteady"] == []
    assert known["cuda"] == {} and record["cuda_counted"] is True
    assert record["cuda_why"].startswith("CUPTI callback API")


def paired_data(cases, base_counts=None, head_counts=None):
    data = {"kind": "pr", "base": "a" * 40, "head": "b" * 40, "base_rev": "main", "head_rev": "pr", "seconds": 10,
            "build_seconds": None, "machine": {"machine": "nvidia-h200", "gpu": "H200"},
            "settings": {"pairs": 45, "confidence": 0.95, "layouts": "random"}, "cases": cases, "skipped": {},
            "only": {}, "errors": {}, "lost": {}, "versions": {}}
    if base_counts:
        data["counts"] = {"base": base_counts, "head": head_counts}
    return data


def counts_record(rev, cases, **extra):
    return {"commit": rev * 12, "rev": rev, "mechanism": "sys.setprofile", "cuda_counted": True,
            "cuda_why": "CUPTI", "nvrtc_why": counts.NVRTC_WHY, "cases": cases, "skipped": {}, "errors": {},
            "settings": {"calls": 100, "slow_calls": 10, "runs": 2, "warmup": "w"}, **extra}


def work(name, cuda=None, python=3, blocks=0, c=1):
    return {"name": name, "calls": 100, "cuda": cuda if cuda is not None else {"cuEventCreate": 1}, "nvrtc": {},
            "python_calls": python, "c_calls": c, "net_blocks": blocks, "unsteady": []}


def test_a_step_diffs_the_counts_made_in_its_own_environment_merged_per_case():
    """The pages' diff of a step (summary.work_changed) takes each side's counts made with that side's package
    versions, never a count of the same commit in another cuda-bindings; and a later pass of a few cases, or one
    without CUPTI, hides nothing of an earlier whole one."""
    from cuda_bench.publish import summary

    event = "bench_event.EventCreate.time_event_create('core')"
    query = "bench_event.EventQuery.time_event_query('core')"
    old, new = {"cuda-bindings": "12.9.10", "python": "3.12.3"}, {"cuda-bindings": "13.3.1", "python": "3.12.3"}
    step = {"base": "a" * 12, "head": "b" * 12, "versions": {"base": old, "head": new}}
    base_in_new = counts_record("a", [work(event, {"cuEventCreate": 1, "cuCtxGetCurrent": 1}), work(query)],
                                versions=new)
    head = counts_record("b", [work(event), work(query)], versions=new)
    assert summary.work_changed(step, {"a" * 12: [base_in_new], "b" * 12: [head]}) is None  # base: 12.9.10 only
    base = counts_record("a", [work(event), work(query, python=5)], versions=old)
    found = summary.work_changed(step, {"a" * 12: [base, base_in_new], "b" * 12: [head]})
    assert found == {"changed": {query: "-2 Python calls"}, "common": 2, "caveats": []}
    later = counts_record("b", [work(event, {}, python=4) | {"cuda": None}], versions=new, cuda_counted=False,
                          cuda_why="cupti-python is not installed in this environment")
    merged = summary.counted_at([head, later], new)
    assert merged["cuda_counted"] and merged["cuda_why"] == "CUPTI"
    assert {c["name"]: (c["cuda"], c["python_calls"]) for c in merged["cases"]} == {
        event: ({"cuEventCreate": 1}, 3), query: ({"cuEventCreate": 1}, 3)}


def test_a_case_whose_cuda_calls_were_not_counted_at_both_commits_is_named_in_the_caveats():
    """A case whose CUDA calls one side, or both, did not count (a pass without CUPTI merged with one of a few
    cases with it) is not compared on them, and the caveats say so: its work is never read as unchanged. With no
    case counted at both commits, a step says nothing of work."""
    from cuda_bench.publish import summary

    event = "bench_event.EventCreate.time_event_create('core')"
    query = "bench_event.EventQuery.time_event_query('core')"
    base = counts_record("a", [work(event)])
    head = counts_record("b", [work(event, {"cuEventCreate": 2}) | {"cuda": None}])
    assert counts_read.changed_work(base, head) == {}
    assert counts_read.caveats(base, head) == ["CUDA calls of `EventCreate('core')` were not counted at both commits: "
                                          "not compared."]
    both = counts_record("b", [work(event, {"cuEventCreate": 2}), work(query) | {"cuda": None}])
    assert counts_read.caveats(counts_record("a", [work(event), work(query) | {"cuda": None}]), both) == [
        "CUDA calls of `EventQuery('core')` were not counted at both commits: not compared."]
    step = {"base": "a" * 12, "head": "b" * 12, "versions": {}}
    only_event = counts_record("a", [work(event)], versions={})
    only_query = counts_record("b", [work(query)], versions={})
    assert summary.work_changed(step, {"a" * 12: [only_event], "b" * 12: [only_query]}) is None
    # how the pages say it: never "the same" where a caveat left something out
    found = summary.work_changed(step, {"a" * 12: [counts_record("a", [work(event)], versions={})],
                                        "b" * 12: [counts_record("b", [work(event) | {"cuda": None}], versions={})]})
    assert summary.work_said(found) == (False, "no change in what both commits counted (1 case)")
    assert summary.work_said(found | {"caveats": []}) == (False, "the same in all 1 case counted at both commits")


def test_the_comment_names_each_case_whose_work_changed_beside_its_timing():
    event = "bench_event.EventCreate.time_event_create('core')"
    query = "bench_event.EventQuery.time_event_query('core')"
    timed = [{"name": event, "ratio": 1.004, "low": 0.998, "high": 1.011, "verdict": "same", "threshold": 0.02,
              "coverage": 0.96, "base_ns": 900, "head_ns": 903, "control": False},
             {"name": query, "ratio": 1.0, "low": 0.99, "high": 1.01, "verdict": "same", "threshold": 0.02,
              "coverage": 0.96, "base_ns": 100, "head_ns": 100, "control": False}]
    base = counts_record("main", [work(event), work(query)])
    head = counts_record("pr", [work(event, {"cuEventCreate": 1, "cuCtxGetCurrent": 1}, python=17, blocks=2),
                                work(query)])
    text = comment.comment(paired_data(timed, base, head))
    section = text[text.index("#### Work per call that changed"):text.index("<details>")]
    assert ("- `EventCreate('core')`: +1 cuCtxGetCurrent, +14 Python calls, +2 net blocks "
            "(×1.004 [0.998, 1.011] same)") in section
    assert "EventQuery" not in section  # its work did not change
    assert "#### Work per call" not in comment.comment(paired_data(timed))  # no counts, no section
    other = counts_record("pr", [work(event, python=9), work(query)], mechanism="sys.monitoring", cuda_counted=False,
                          cuda_why="cupti-python is not installed in this environment")
    for c in other["cases"]:
        c["cuda"] = None
    assert counts_read.diff(base, other) == {}  # Python calls counted two ways, CUDA calls on one side only
    notes = " ".join(counts_read.caveats(base, other))
    assert "not counted on the head side" in notes and "not compared" in notes


# --- two real cuda-core releases ------------------------------------------------------------------------------
OLD = ["cuda-core[cu13]==0.3.2"]  # with NVRTC, as the newest below; both take the newest cuda-bindings 13

OPTIONS = "bench_program.ProgramOptionsCreate.time_program_options_create('core')"
CONFIG = "bench_launch.LaunchConfigCreate.time_launch_config_create('core')"
RESULT = "bench_enum.ResultFromValue.time_result_from_value('bindings')"
ERROR = "bench_enum.ResultFromErrorValue.time_result_from_error_value('bindings')"
COMPILE = "bench_program.Compile.time_compile('bindings', 'ptx')"
FLOOR = "bench_harness.Floor.time_noop('noop')"
CREATE = "bench_program.NvrtcCreateProgram.time_nvrtc_create_program('core')"
REAL = [OPTIONS, CONFIG, RESULT, ERROR, COMPILE, FLOOR, CREATE]


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """The GPU-free cases counted in cuda-core 0.3.2 and 1.2.2 (each with NVRTC and cuda-bindings 13)."""
    tmp = tmp_path_factory.mktemp("releases")
    sides = [paired.Side("base", "0.3.2", "0.3.2", str(make_env(OLD + RUNNER))),
             paired.Side("head", "1.2.2", "1.2.2", str(make_env(NEWEST_WITH_NVRTC + RUNNER)))]
    return countpass.measure(sides, REAL, log_dir=tmp / "logs", progress=lambda m: None)


@pytest.mark.slow
def test_two_releases_differ_by_the_work_their_source_does(releases):
    """Read off the two releases' source. ProgramOptionsCreate('core') calls the benchmark's ``program_options``
    (one Python call in both), which constructs ``ProgramOptions``, a Python @dataclass in both: its generated
    ``__init__`` is Python code in both (one call). In 0.3.2 (``_program.py``) ``__post_init__`` is Python too
    (one call): with the benchmark's options it calls ``str.encode`` once and ``list.append`` for arch,
    relocatable_device_code, lineinfo, device_code_optimize and std (debug=False adds nothing; the
    ``_handle_boolean_option`` it calls is Cython, in ``cuda_utils.pyx``, so neither a Python call nor a profiled C
    call): 3 Python calls and 6 C calls per call. In 1.2.2 (``_program.pyx``) ``__post_init__`` is a Cython
    function: 2 Python calls, no profiled C call. The object is freed on return in both: no net block.

    The cuda.bindings cases are the same code on both sides (one cuda-bindings 13 for both): CUresult(0) is one
    Python call (the enum's constructor) and one C call; the NVRTC compile (``_compat.nvrtc_compile``) makes one
    nvrtcCreateProgram, nvrtcCompileProgram, nvrtcGetPTXSize, nvrtcGetPTX and nvrtcDestroyProgram. The harness
    floor (``gc.isenabled``) is one C call. LaunchConfig needs the driver in 0.3.2 (its ``_lazy_init`` asks for
    the driver's version): skipped there, counted in 1.2.2 only (Cython: no Python call), and so in no diff.
    NvrtcCreateProgram('core'): 0.3.2's ``Program.__init__`` (Python) calls ``nvrtc.nvrtcCreateProgram`` and its
    ``close()`` ``nvrtc.nvrtcDestroyProgram`` (through a ``weakref.finalize``), both looked up on the module: one
    of each seen per call; 1.2.2's
    ``Program`` is Cython and none is seen, which the diff reports with the caveat that calls made from Cython are
    not seen. No driver here: no CUDA call is counted, on either side."""
    base, head = releases["base"], releases["head"]
    assert base["versions"]["cuda-core"] == "0.3.2" and head["versions"]["cuda-core"] == "1.2.2"
    assert base["versions"]["cuda-bindings"] == head["versions"]["cuda-bindings"]
    old, new = by_name(base), by_name(head)
    assert (old[OPTIONS]["python_calls"], new[OPTIONS]["python_calls"]) == (3, 2)
    assert old[OPTIONS]["net_blocks"] == new[OPTIONS]["net_blocks"] == 0
    for side in (old, new):
        assert side[COMPILE]["nvrtc"] == {"nvrtcCompileProgram": 1, "nvrtcCreateProgram": 1, "nvrtcDestroyProgram": 1,
                                          "nvrtcGetPTX": 1, "nvrtcGetPTXSize": 1}
        assert side[COMPILE]["calls"] == 10  # compilation: the suite times it one call per body
        assert (side[RESULT]["python_calls"], side[FLOOR]["python_calls"], side[FLOOR]["net_blocks"]) == (1, 0, 0)
        assert all(c["cuda"] is None for c in side.values())
        assert not [n for n, c in side.items() if c["unsteady"] and n != CREATE]
    assert CONFIG in base["skipped"] and new[CONFIG]["python_calls"] == 0
    expected = "`ProgramOptionsCreate('core')`: -1 Python calls"
    if base["mechanism"] == head["mechanism"] == "sys.setprofile":
        assert (old[OPTIONS]["c_calls"], new[OPTIONS]["c_calls"]) == (6, 0)
        assert (old[RESULT]["c_calls"], old[FLOOR]["c_calls"]) == (1, 1)
        expected += ", -6 C calls"
    assert (old[CREATE]["nvrtc"], new[CREATE]["nvrtc"]) == ({"nvrtcCreateProgram": 1, "nvrtcDestroyProgram": 1}, {})
    # 0.3.2's Program registers a weakref.finalize per object: the blocks it leaves vary with where they lie
    assert set(old[CREATE]["unsteady"]) <= {"net_blocks"} and not new[CREATE]["unsteady"]
    found = counts_read.diff(base, head)
    assert found.keys() == {OPTIONS, CREATE} and found[OPTIONS] == expected
    assert found[CREATE].startswith("`NvrtcCreateProgram('core')`: -1 nvrtcCreateProgram, -1 nvrtcDestroyProgram, ")
    assert "may have moved into Cython" in counts_read.diff_markdown(base, head)
    assert not base["errors"] and not head["errors"]


@pytest.mark.slow
def test_the_counts_of_a_release_are_the_same_in_another_process(releases, tmp_path):
    """A/A on a real release: 1.2.2 counted again, in a fresh worker process, reads exactly the same."""
    side = paired.Side("head", "1.2.2", "1.2.2", str(make_env(NEWEST_WITH_NVRTC + RUNNER)))
    again = countpass.count_side(side, REAL, log_dir=tmp_path, progress=lambda m: None)
    assert again["cases"] == releases["head"]["cases"]


@pytest.mark.slow
def test_counted_in_parallel_runs_a_commit_reads_as_counted_in_one_process(releases, tmp_path):
    """The counting pass of a window cuts each commit's cases into runs, counted in worker processes at once: the
    record of 1.2.2 made that way has the same cases, in the same order, with the same counts, as one process made;
    its time is the wall time of its runs."""
    side = paired.Side("head", "1.2.2", "1.2.2", str(make_env(NEWEST_WITH_NVRTC + RUNNER)))
    found = countpass.count_parallel([side], REAL, jobs=3, log_dir=tmp_path, progress=lambda m: None)
    record = found["head"]
    assert [c["name"] for c in record["cases"]] == [c["name"] for c in releases["head"]["cases"]]
    assert record["cases"] == releases["head"]["cases"]
    assert record["versions"] == releases["head"]["versions"] and record["seconds"] > 0
    # two runs per process at once, so that a long run does not hold the rest up: 7 cases in runs of 2, a log each
    assert {p.name for p in tmp_path.iterdir()} == {"part00", "part01", "part02", "part03"}


@pytest.mark.slow
def test_with_cupti_carried_as_wheels_and_no_driver_cuda_calls_are_none_with_the_reason(tmp_path):
    """cupti-python and libcupti's wheel, as a GPU box without network gets them (``--cupti WHEEL``): installed with
    --no-deps into a folder only the counting workers see (no other package comes with them; the environment itself
    is left as built). No libcuda here: CUPTI cannot start, and says so; everything else is counted as without it."""
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
                    "-d", str(wheels), "cupti-python==13.0.1", "nvidia-cuda-cupti==13.*"], check=True)
    python = make_env(NEWEST_WITH_NVRTC + RUNNER)
    (side,) = countpass.with_cupti([paired.Side("head", "1.2.2", "1.2.2", str(python))], [wheels],
                                   tmp_path / "cupti", progress=lambda m: None)
    (overlay,) = side.env["PYTHONPATH"].split(":")
    installed = sorted(p.name.split("-")[0] for p in Path(overlay).glob("*.dist-info"))
    assert installed == ["cupti_python", "nvidia_cuda_cupti"]  # not cuda-bindings nor numpy, which it requires
    record = countpass.count_side(side, [FLOOR, OPTIONS], log_dir=tmp_path, progress=lambda m: None)
    assert record["cuda_counted"] is False and record["cuda_why"].startswith("CUPTI could not start")
    assert "libcuda" in record["cuda_why"] or "driver" in record["cuda_why"]
    assert [(c["python_calls"], c["cuda"]) for c in record["cases"]] == [(0, None), (2, None)]
    assert not (python.parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" /
                "site-packages" / "cupti").exists()


def test_the_worker_answers_a_count_request(stand_in):
    """The protocol: {"op": "count", "case", "calls"} -> one JSON line with every count and how it was taken."""
    request = {"op": "count", "case": names_of("Known")[0], "calls": 14}
    proc = subprocess.run([sys.executable, "-m", "cuda_bench.run.worker", "--benchmark-dir", str(stand_in)],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    answer = json.loads(proc.stdout.splitlines()[0])
    assert answer["ok"] and (answer["calls"], answer["python_calls"], answer["net_blocks"]) == (14, 2, 0)
    assert {"cuda", "cuda_why", "nvrtc", "nvrtc_why", "c_calls", "mechanism", "unsteady"} <= set(answer)


# --- the commands ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_counts_command_writes_each_commits_table_and_prints_the_diff_and_keeps_no_gpu_runs_out(
        tmp_path, git_repo, monkeypatch, capsys):
    """``cuda-bench counts REV REV2`` in the environments compare builds (here the two releases' environments):
    .asv/counts/REV/counts.json and counts.md for each, the diff printed; without a GPU nothing goes into
    results/, with one a record per commit is appended to results/<machine>/counts.jsonl."""
    from cuda_bench import cli
    from cuda_bench.commands import common
    from cuda_bench.foundations import machine

    envs = {"v0.3.2": {"commit": "3" * 40, "python": str(make_env(OLD + RUNNER))},
            "v1.2.2": {"commit": "4" * 40, "python": str(make_env(NEWEST_WITH_NVRTC + RUNNER))}}
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(gate, "environments", lambda repo, revs, *a, **k: {rev: envs[rev] for rev in revs})
    monkeypatch.setattr(counts_command, "RESULTS", tmp_path / "results")
    argv = ["counts", "v0.3.2", "v1.2.2", "--repo", str(git_repo), "--machine", "m", "--out", str(tmp_path / "out"),
            "-b", "ProgramOptionsCreate|Floor"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "- `ProgramOptionsCreate('core')`: -1 Python calls" in out and "Floor" not in out.split("→")[-1]
    for rev in envs:
        record = json.loads((tmp_path / "out" / rev / "counts.json").read_text())
        assert [c["name"] for c in record["cases"]] == [FLOOR, OPTIONS] and record["rev"] == rev
        assert "| `ProgramOptionsCreate('core')` |" in (tmp_path / "out" / rev / "counts.md").read_text()
        imported = json.loads((tmp_path / "out" / rev / "imports.json").read_text())  # python -X importtime
        assert imported["count"] == len(imported["modules"]) > 0 and imported["rev"] == rev
    # what a user of each release imports, and the modules the second added, under the first of each subtree
    assert "`import cuda.core.experimental` → `import cuda.core`:" in out and "- Added: `" in out
    assert not (tmp_path / "results").exists()  # no GPU here: not the history
    monkeypatch.setattr(common.machine, "has_gpu", lambda info: True)
    assert machine.has_gpu({}) and cli.main(argv) == 0
    written = records.read(tmp_path / "results" / "m", "counts")
    assert [r["rev"] for r in written] == ["v0.3.2", "v1.2.2"] and written[0]["commit"] == "3" * 40
    assert [r["rev"] for r in records.read(tmp_path / "results" / "m", "imports")] == ["v0.3.2", "v1.2.2"]


def test_compare_counts_both_builds_after_timing_and_the_comment_names_what_changed(
        stand_in, tmp_path, git_repo, monkeypatch):
    """``cuda-bench compare`` runs the counting pass in both builds after the timing (here the stand-in suite, the
    head with one more Python call in one case): summary.json keeps both records, the comment names the case
    beside its timing verdict; ``--no-counts`` skips the pass."""
    from types import SimpleNamespace

    from cuda_bench import cli
    from cuda_bench.commands import compare as compare_command

    injected = names_of("Injected")[0]
    sides = [paired.Side("base", "a", "a" * 40, sys.executable, {"QUEUE_LOG": str(tmp_path / "q"), "INJECT": "0"}),
             paired.Side("head", "b", "b" * 40, sys.executable, {"QUEUE_LOG": str(tmp_path / "q"), "INJECT": "1"})]
    timed = [{"name": injected, "ratio": 1.013, "low": 1.004, "high": 1.02, "verdict": "same", "threshold": 0.026,
              "coverage": 0.96, "base_ns": 50, "head_ns": 51, "control": False}]
    monkeypatch.setenv("HOME", str(tmp_path))
    report = SimpleNamespace(sides=sides, seconds=1.0)
    monkeypatch.setattr(gate, "measure", lambda repo, base, head, **kw: (report, 0.0))
    monkeypatch.setattr(summaries, "summary", lambda *a: paired_data(timed))
    real = compare_command.settings_of
    monkeypatch.setattr(compare_command, "settings_of", lambda args: real(args).__class__(benchmark_dir=stand_in))
    argv = ["compare", "a", "b", "--repo", str(git_repo), "--machine", "m", "-b", "Injected|Known", "--no-instructions"]
    assert cli.main([*argv, "--out", str(tmp_path / "with")]) == 0
    data = json.loads((tmp_path / "with" / "summary.json").read_text())
    assert [c["name"] for c in data["counts"]["head"]["cases"]] == names_of("Known", "Injected")
    comment = (tmp_path / "with" / "summary.md").read_text()
    assert "- `Injected('py')`: +1 Python calls (×1.013 [1.004, 1.020] same)" in comment
    # the stand-in builds have no cuda.core: what it imports is said not measured, and why
    assert "#### What `import cuda.core` imports\n\nNot measured: base: " in comment
    assert cli.main([*argv, "--out", str(tmp_path / "without"), "--no-counts"]) == 0
    assert "counts" not in json.loads((tmp_path / "without" / "summary.json").read_text())


def test_a_call_that_raises_leaves_no_counting_behind():
    def counting_python_calls():
        if hasattr(sys, "monitoring"):
            return sys.monitoring.get_tool(sys.monitoring.PROFILER_ID) is not None
        return sys.getprofile() is not None

    def body():  # fails while its Python calls are counted
        if counting_python_calls():
            raise ValueError("the operation failed")

    with pytest.raises(ValueError):
        counts.count_work(body, calls=3, cuda=False, warmup=False)
    assert sys.getprofile() is None
    if hasattr(sys, "monitoring"):
        assert all(sys.monitoring.get_tool(i) is None for i in (sys.monitoring.PROFILER_ID, 3, 4, 5))
