"""Instructions per call (``cuda_bench.foundations.callgrind``, ``cuda_bench.foundations.instructions``,
``cuda_bench.compare.instrpass``, ``cuda_bench.results.instructions_read``): callgrind's files read into counts per
function, the difference of two run lengths less the harness, the median over repeats and layouts, a case named only
where it moved beyond its spread, the timing and the count said together, where the instructions went, the comment and
the Steps page; and under real valgrind, one build counted twice reads the same, and a change inside compiled code is
counted at its case alone with the function it went into named.

The recorded files (``tests/fixtures/instructions``) come from the CPU evidence (docs/evidence/instructions): the
GPU-free cases of cuda_core built from cb56ab9f9 and from the same commit with one extra validation in
``LaunchConfig.__init__`` (``scripts/inject_check.sh``), counted by ``cuda-bench counts --out``.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from cuda_bench.compare import comment, instrpass, paired
from cuda_bench.foundations import callgrind, instructions
from cuda_bench.results import instructions_read, records

FIXTURES = ROOT / "tests" / "fixtures" / "instructions"
CONFIG = "bench_launch.LaunchConfigCreate.time_launch_config_create('core')"

#: a callgrind file in the format's compressed form: names given once by number, positions relative (+2, -1) and
#: repeated (*), a call into another object (cob=) and its inclusive cost on the line after calls=
DUMP = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 7
part: 3

desc: Trigger: Client Request: Case('x') body x3 repeat 1

positions: line
events: Ir
summary: 915
totals: 915

ob=(1) /usr/lib/libpython3.12.so.1.0
fl=(1) ???
fn=(1) PyObject_Vectorcall
0 10
cob=(2) /env/lib/_launch_config.cpython-312-x86_64-linux-gnu.so
cfn=(2) 0x00000000000120c0
calls=3 0
0 900
+2 5

ob=(2)
fl=(2) ???
fn=(2)
0 500
cob=(1)
cfn=(3) PyLong_AsLongLong
calls=6 0
* 400

ob=(1)
fn=(3)
0 300
-1 100
"""


def test_a_dump_reads_into_each_functions_own_and_inclusive_count(tmp_path):
    """Own counts are the cost lines under a function; inclusive is callgrind_annotate's: the calls into a function,
    or for one never called within the dump (the top of the counted stack) its own and its calls'. Names given once
    by number are found again, each function keeps the object it lies in."""
    path = tmp_path / "callgrind.out.7.3"
    path.write_text(DUMP)
    dump = callgrind.read(path)
    assert dump.label == "Case('x') body x3 repeat 1" and dump.total == 915
    libpython, launch = "libpython3.12.so.1.0", "_launch_config.cpython-312-x86_64-linux-gnu.so"
    assert dump.functions == {("PyObject_Vectorcall", libpython): [15, 15 + 900],
                              ("0x00000000000120c0", launch): [500, 900],
                              ("PyLong_AsLongLong", libpython): [400, 400]}
    assert sum(own for own, _ in dump.functions.values()) == dump.total


def test_a_recorded_dump_totals_its_functions_own_counts(tmp_path):
    """A dump callgrind wrote (the long run of LaunchConfigCreate('core') at cb56ab9f9): its total is the sum of its
    functions' own counts, no function's inclusive count is below its own, and its label names the run."""
    path = tmp_path / "callgrind.out"
    with gzip.open(FIXTURES / "LaunchConfigCreate_core.long.callgrind.out.gz", "rb") as f:
        path.write_bytes(f.read())
    dump = callgrind.read(path)
    assert dump.label.startswith(f"{CONFIG} body x3 repeat ") and dump.total > 0
    assert sum(own for own, _ in dump.functions.values()) == dump.total
    assert all(inclusive >= own for own, inclusive in dump.functions.values())


def runs_and_totals(repeats, per_call, loop=50, once=1000, burst=None, unroll=100, lengths=(1, 3)):
    """A case's counted runs as the worker lists them, and their totals as callgrind would count them: every run
    costs ``once`` (switching the count on and off), each run of a body ``loop`` (the harness) and each call
    ``per_call``; ``burst``: (repeat, body, bodies, instructions) added to one run (a retried specialisation)."""
    runs, totals = [], {}
    for repeat in range(repeats):
        for bodies in lengths:
            for body in (False, True):
                name = f"r{repeat}-{bodies}-{body}"
                runs.append({"body": body, "repeat": repeat, "bodies": bodies, "calls": bodies * unroll,
                             "file": name})
                totals[name] = once + bodies * (loop + (per_call * unroll if body else 0))
                if burst and burst[:3] == (repeat, body, bodies):
                    totals[name] += burst[3]
    return runs, totals


def test_per_call_is_the_long_run_less_the_short_one_less_the_harness():
    """What every run does once cancels in the difference of the two lengths, the harness's loop in the body that
    does nothing: per call is what the calls alone add."""
    runs, totals = runs_and_totals(5, per_call=7)
    value, spread, values, _ = instructions.per_call(runs, totals)
    assert value == 7 and spread == 0 and values == [7] * 5
    runs, totals = runs_and_totals(5, per_call=7, loop=3000, once=10**6)
    assert instructions.per_call(runs, totals)[0] == 7


def test_whether_a_call_is_heavy_is_read_from_the_costs_its_value_is_read_from(tmp_path):
    """A dump's header ``summary:`` can be larger than the costs the file holds (callgrind with client requests):
    the probe is judged by its file's ``totals:``, its last line, the count values are taken from, so a light call
    is counted in five repeats. The file is longer than the tail the worker reads."""
    calls, cost = 100, 100 * 2000
    many = "".join(f"fn=({i}) f{i}\n0 0\n" for i in range(2, 800))  # functions of no cost: 8 KiB
    light = tmp_path / "light.callgrind.out"
    light.write_text(f"version: 1\ncreator: callgrind-3.19.0\npositions: line\nevents: Ir\n"
                     f"summary: {cost * 100}\n\nfn=(1) body\n0 {cost}\n{many}\ntotals: {cost}\n")
    assert light.stat().st_size > 8192 and callgrind.total(light) == cost == callgrind.read(light).total
    assert not instructions.heavy(light, calls)
    for per_call, heavy in ((instructions.HEAVY - 1, False), (instructions.HEAVY, True)):
        probe = tmp_path / f"probe-{per_call}.callgrind.out"
        probe.write_text(f"summary: {per_call * calls}\n\nfn=(1) body\n0 {per_call * calls}\n\n"
                         f"totals: {per_call * calls}\n")
        assert instructions.heavy(probe, calls) is heavy


def test_a_retry_that_lands_in_one_run_moves_neither_the_value_nor_the_spread():
    """CPython's retried specialisations land in one run of the many: the median of five repeats leaves it out, and
    the spread is the range of the middle three; with three repeats (an operation timed one call per body) it is
    the range of all."""
    extra = 100 * 100  # a hundred call sites retried, a hundred instructions each
    runs, totals = runs_and_totals(5, per_call=7, burst=(2, True, 3, extra))
    value, spread, values, middle = instructions.per_call(runs, totals)
    assert value == 7 and spread == 0 and max(values) == 7 + extra / 200 and middle != 2
    runs, totals = runs_and_totals(3, per_call=7, burst=(1, True, 1, extra))
    value, spread, values, _ = instructions.per_call(runs, totals)
    assert value == 7 and spread == pytest.approx((7 - min(values)) / 7) and min(values) < 7


def one_layout(value, spread=0.0):
    return {"value": value, "spread": spread, "functions": {("f", "libx.so"): [1.0, value]}, "calls": 200,
            "warmup": 6400, "repeats": 5, "kept": {}}


def test_a_case_is_the_median_of_its_layouts_and_its_spread_their_range():
    """One layout can sit a percent or two off (the interpreter's caches collide where objects lie): the case is
    the median of its five, its spread their range over it, its functions the median layout's."""
    layouts = [one_layout(v) for v in (1000, 1004, 1017, 1001, 1003)]
    entry, rows = instrpass.merged("c", layouts, {})
    assert entry["per_call"] == 1003 and entry["spread"] == pytest.approx(17 / 1003, abs=1e-6)
    assert entry["layouts"] == [1000, 1004, 1017, 1001, 1003] and rows == [["f", "libx.so", 1.0, 1003]]
    alone, _ = instrpass.merged("c", [one_layout(1000, spread=0.002)], {})
    assert alone["spread"] == 0.002  # one layout: its repeats' spread


def test_an_unnamed_function_takes_the_python_name_of_its_address():
    """callgrind names a function of a stripped module by its address; the worker's table of the addresses Python
    reaches names it, so two builds, which place it apart, name it alike; one Python does not reach stays an
    address."""
    rows = instrpass.named({("0x00000000000120c0", "_launch_config.so"): [10.0, 100.0],
                            ("0x0000000000000abc", "_launch_config.so"): [5.0, 5.0],
                            ("PyObject_Vectorcall", "libpython3.12.so.1.0"): [1.0, 120.0]},
                           {"_launch_config.so": {"0x00000000000120c0": "LaunchConfig.__init__"}})
    assert rows == [["PyObject_Vectorcall", "libpython3.12.so.1.0", 1.0, 120.0],
                    ["LaunchConfig.__init__", "_launch_config.so", 10.0, 100.0],
                    ["0x0000000000000abc", "_launch_config.so", 5.0, 5.0]]


def record(rev, cases, valgrind="3.19.0", python="3.12.3"):
    return {"commit": rev * 12, "rev": rev, "date": "2026-12-06T00:00:00Z", "seconds": 1.0, "build_seconds": None,
            "command": None, "machine": {}, "host": {"start": None, "boot": None},
            "versions": {"python": python, "cuda-core": "1.2.0"}, "valgrind": valgrind,
            "settings": {"fast": [[1, 3], 5, 64], "slow": [[1, 2], 1, 8], "probe": [8, 100000], "layouts": 3,
                         "processes": 15},
            "cases": cases, "skipped": {}, "errors": {}}


def case(name, per_call, spread=0.0):
    return {"name": name, "per_call": per_call, "spread": spread, "layouts": [per_call] * 3, "calls": 200,
            "warmup": 6400}


def test_a_case_moves_only_beyond_its_spread_and_half_a_percent():
    """A case is named where its count moved by more than its larger spread, and never by less than
    SAME_WITHIN (one commit counted twice in fresh processes repeats within it); records of two valgrind versions
    or two Pythons are not compared at all."""
    floor = instructions_read.SAME_WITHIN
    base = record("a", [case("c1", 1000), case("c2", 1000, spread=0.02), case("c3", 1000)])
    head = record("b", [case("c1", 1000 * (1 + 0.8 * floor)), case("c2", 1015), case("c3", 1000 * (1 + 1.2 * floor))])
    assert record_ok(base) and record_ok(head)
    found = instructions_read.compared(base, head)
    assert [name for name, entry in found.items() if entry["moved"]] == ["c3"]
    assert found["c2"]["bound"] == 0.02 and found["c1"]["bound"] == floor
    assert instructions_read.moved(record("a", [case("c1", 1000)]), record("b", [case("c1", 900)])) == {
        "c1": {"base": 1000, "head": 900, "change": -100, "relative": -0.1, "bound": floor, "moved": True}}
    assert instructions_read.compared(base, record("b", head["cases"], valgrind="3.22.0")) == {}
    assert "valgrind 3.19.0 on one side and 3.22.0" in instructions_read.comparable(base, record("b", [], "3.22.0"))
    assert "Python" in instructions_read.comparable(base, record("b", [], python="3.11.7"))


def test_records_counted_by_two_methods_are_not_compared():
    """The warm-up changes what a count includes: a record counted with the probe and one counted without it (or
    with other run lengths or layouts) are not compared, and the answer says what differs. The processes a pass
    dealt its cases into are not the method."""
    base, head = record("a", [case("c1", 1000)]), record("b", [case("c1", 1100)])
    assert instructions_read.comparable(base, head | {"settings": head["settings"] | {"processes": 30}}) is None
    before = head | {"settings": {k: v for k, v in head["settings"].items() if k != "probe"}}
    assert instructions_read.compared(base, before) == {}
    assert instructions_read.comparable(base, before) == (
        "instructions were counted by two methods (probe [8, 100000] and None): not compared")
    longer = head | {"settings": head["settings"] | {"fast": [[1, 4], 5, 64]}}
    assert "fast [[1, 3], 5, 64] and [[1, 4], 5, 64]" in instructions_read.comparable(base, longer)
    assert instructions_read.moved(base, head)["c1"]["moved"]


def test_builds_compiled_by_two_compilers_are_not_compared_and_the_answer_names_them():
    """Two builds of one tree by two compilers run different machine code (on the H100, a cuda_core built on the
    GPU box against one built on the CPU machine moved 20 cases by about 1 %): their counts are not compared. Where
    one side does not say what compiled it, they are."""
    gcc12 = {"compiler": "gcc (Debian 12.2.0-14) 12.2.0", "cython": "3.2.4", "python": "3.12.3"}
    gcc13 = dict(gcc12, compiler="gcc (GCC) 13.3.0")
    base = record("a", [case("c1", 1000)]) | {"built_with": {"cuda_core": gcc12}}
    head = record("b", [case("c1", 1010)]) | {"built_with": {"cuda_core": gcc13}}
    assert instructions_read.compared(base, head) == {}
    why = instructions_read.comparable(base, head)
    assert "cuda_core was compiled by compiler gcc (Debian 12.2.0-14) 12.2.0; cython 3.2.4 on one side" in why
    assert "compiler gcc (GCC) 13.3.0" in why and record_ok(base)
    assert instructions_read.comparable(base, head | {"built_with": {"cuda_core": dict(gcc12, python="3.12.4")}}) \
        is None  # the Python that ran the build is not what compiled the code
    assert instructions_read.moved(base, head | {"built_with": {}}) == {
        "c1": {"base": 1000, "head": 1010, "change": 10, "relative": 0.01, "bound": 0.005, "moved": True}}
    assert "What compiled cuda_core is recorded on one side only" in instructions_read.diff_markdown(
        base, head | {"built_with": {}})
    assert "recorded on one side only" not in instructions_read.diff_markdown(base, base | {"rev": "b"})


def record_ok(found):
    return records.problem(found | {"record": "instructions", "schema": records.SCHEMA},
                           records.SHAPES["instructions"]) is None


def test_the_change_is_said_as_instructions_per_call_and_a_percentage():
    entry = {"base": 6000.0, "head": 6312.4, "change": 312.4, "relative": 312.4 / 6000, "bound": 0.005, "moved": True}
    assert instructions_read.change_text(entry) == "+312 instructions per call (+5.2 %)"
    small = {"base": 80.0, "head": 79.2, "change": -0.8, "relative": -0.01, "bound": 0.005, "moved": True}
    assert instructions_read.change_text(small) == "-0.8 instructions per call (-1.0 %)"


def test_the_timing_and_the_count_are_said_together():
    """A flag with more instructions agrees; a flag with the same count, or a count that moved with no flag, is
    said as such, as is each going its own way."""
    up = {"change": 50, "moved": True}
    down = {"change": -50, "moved": True}
    still = {"change": 1, "moved": False}
    said = instructions_read.agreement
    assert said("regression", up) == "slower, with more instructions per call"
    assert said("regression", still).startswith("slower with the same instructions per call")
    assert said("regression", down).startswith("slower with fewer instructions per call")
    assert said("improvement", down) == "faster, with fewer instructions per call"
    assert said("improvement", still) == "faster with the same instructions per call"
    assert said("same", up) == "more instructions per call, with no change in the time beyond its threshold"
    assert said("same", down).startswith("fewer instructions per call")
    assert said("same", still) is None and said(None, up) is None and said("regression", None) is None


def recorded():
    """The CPU evidence's two records and function rows: cb56ab9f9 and the extra validation on it."""
    found = json.loads((FIXTURES / "records.json").read_text())
    return found["base"], found["head"], found["base_functions"], found["head_functions"]


def test_the_recorded_change_moved_its_case_alone_and_the_table_names_the_method():
    """The extra validation in LaunchConfig.__init__ (scripts/inject_check.sh) moved LaunchConfigCreate('core')
    alone beyond its spread; its instructions went into the method itself, which the table names by its Python
    name (the build is stripped: the name comes from the type's slot), at the top of the chain of calls whose
    inclusive counts grew by the change."""
    base, head, base_functions, head_functions = recorded()
    assert record_ok(base) and record_ok(head)
    moved = instructions_read.moved(base, head)
    assert list(moved) == [CONFIG] and moved[CONFIG]["change"] > 0
    rows = base_functions[CONFIG], head_functions[CONFIG]
    into = instructions_read.went_into(instructions_read.function_changes(*rows))
    assert into[0] == "LaunchConfig.__init__" and into[1].startswith("_launch_config.")
    table = instructions_read.function_table(*rows)
    assert any(line.startswith("| `LaunchConfig.__init__` |") for line in table)
    text = instructions_read.diff_markdown(base, head, base_functions, head_functions)
    assert f"1 of {len(instructions_read.compared(base, head))} cases counted on both sides moved" in text
    assert "- `LaunchConfigCreate('core')`: +" in text and "mostly into `LaunchConfig.__init__`" in text


def paired_data(timed, instructions_found):
    return {"kind": "pr", "base": "a" * 40, "head": "b" * 40, "base_rev": "main", "head_rev": "pr", "seconds": 10,
            "build_seconds": None, "machine": {"machine": "nvidia-h200", "gpu": "H200"},
            "settings": {"pairs": 45, "confidence": 0.95, "layouts": "random"}, "cases": timed, "skipped": {},
            "only": {}, "errors": {}, "lost": {}, "versions": {}, "instructions": instructions_found}


def timed_case(name, ratio, low, high, verdict):
    return {"name": name, "ratio": ratio, "low": low, "high": high, "verdict": verdict, "threshold": 0.02,
            "coverage": 0.96, "base_ns": 1000, "head_ns": 1000 * ratio, "control": False}


def test_the_comment_says_plus_n_instructions_per_call_beside_each_flag_with_the_functions():
    """The PR comment: each case whose count moved or whose time was flagged, "+N instructions per call (+x %)"
    beside its timing verdict and what the two say together; the functions of a moved case; what a count is and is
    not."""
    base, head, base_functions, head_functions = recorded()
    flagged = "bench_program.ProgramOptionsCreate.time_program_options_create('core')"
    timed = [timed_case(CONFIG, 1.041, 1.032, 1.050, "regression"), timed_case(flagged, 1.03, 1.025, 1.04,
                                                                                "regression")]
    found = {"base": base, "head": head,
             "functions": {CONFIG: {"base": base_functions[CONFIG], "head": head_functions[CONFIG]}}}
    text = comment.comment(paired_data(timed, found))
    section = text[text.index("#### Instructions per call"):]
    change = instructions_read.change_text(instructions_read.moved(base, head)[CONFIG])
    assert (f"- `LaunchConfigCreate('core')`: {change} beside ×1.041 [1.032, 1.050] regression: slower, with "
            "more instructions per call") in section
    assert "- `ProgramOptionsCreate('core')`: the same instructions per call (within ±" in section
    assert "slower with the same instructions per call" in section
    assert "| `LaunchConfig.__init__` |" in section and instructions_read.WHAT in section
    assert "#### Instructions per call" not in comment.comment(paired_data(timed, None))
    said = comment.comment(paired_data(timed, {"error": "no valgrind on PATH"}))
    assert "Not counted: no valgrind on PATH" in said


def test_the_steps_page_says_the_instructions_beside_a_flag_and_names_a_count_that_moved_alone():
    from cuda_bench.publish.pages import steps as steps_page

    base, head, _, _ = recorded()
    flagged = "bench_program.ProgramOptionsCreate.time_program_options_create('core')"
    step = {"base": base["commit"], "head": head["commit"], "date": "2026-12-06T00:00", "seconds": 100,
            "settings": {"pairs": 45}, "versions": {"base": base["versions"], "head": head["versions"]},
            "cases": [timed_case(flagged, 1.03, 1.025, 1.04, "regression") | {"pairs": [], "confirmed": False,
                                                                               "measurements": []},
                      timed_case(CONFIG, 1.01, 1.0, 1.02, "same") | {"pairs": [], "measurements": []}],
            "errors": {}, "skipped": {}, "only": {}, "lost": {}}
    page = steps_page.render_steps({"m": [step]}, {}, {}, {}, {"m": {base["commit"]: [base],
                                                                       head["commit"]: [head]}})
    change = instructions_read.change_text(instructions_read.moved(base, head)[CONFIG])
    assert f"{change}: more instructions per call, with no change in the time beyond its threshold" in page
    assert 'data-instructions="1"' in page and "slower with the same instructions per call" in page
    assert instructions_read.WHAT.split(":")[0] in page
    assert "instructions per call" not in steps_page.render_steps({"m": [step]})  # not counted: nothing said


# --- under valgrind -------------------------------------------------------------------------------------------
STAND_IN = '''
import collections
import os
import zlib

from benchmarks._op import unrolled

DATA = b"x" * (4608 if os.environ.get("INJECT") == "1" else 4096)


class Checksum:
    """zlib.crc32 over a buffer: compiled work that calls nothing Python sees; INJECT=1 makes the buffer longer."""
    params = [["py"]]
    param_names = ["api"]
    unroll = 100

    def setup(self, api):
        self.body = unrolled(zlib.crc32, (DATA,), None, self.unroll)

    def time_checksum(self, api):
        self.body()


class Steady:
    params = [["py"]]
    param_names = ["api"]
    unroll = 100

    def setup(self, api):
        self.body = unrolled(len, ("ab",), None, self.unroll)

    def time_steady(self, api):
        self.body()


class Heavy:
    """Over HEAVY instructions a call (a sum over a range, in C): counted once, after the probe's warm-up."""
    params = [["py"]]
    param_names = ["api"]
    unroll = 100

    def setup(self, api):
        self.body = unrolled(sum, (range(1000),), None, self.unroll)

    def time_heavy(self, api):
        self.body()


class Queued:
    """Enqueues as a launch does; the count drains between batches, outside the count."""
    params = [["py"]]
    param_names = ["api"]
    queued = True
    number = 1
    unroll = 100

    def setup(self, api):
        self.queue = collections.deque()  # its blocks come back from its own free list: no malloc
        self.body = unrolled(self.queue.append, (1,), None, self.unroll)
        self.drain = self.queue.clear

    def time_queued(self, api):
        self.body()


class Compile:
    """A compilation by its class's name (instructions.ONE_LAYOUT): counted in the first layout alone."""
    params = [["py"]]
    param_names = ["api"]
    unroll = 1

    def setup(self, api):
        self.body = lambda: sum(range(300))

    def time_compile(self, api):
        self.body()


class Interrupting:
    """Its first setup anywhere interrupts the pass (SIGINT to the process that started the worker, as a call's
    time limit does), once (MARK), and then takes a second more: the cases of other parts are counted by then."""
    params = [["py"]]
    param_names = ["api"]
    unroll = 100

    def setup(self, api):
        import signal
        import time
        try:
            os.close(os.open(os.environ["MARK"], os.O_CREAT | os.O_EXCL))
            os.kill(os.getppid(), signal.SIGINT)
            if os.environ.get("DIE") == "1":  # as a call's time limit does: its worker dies of it too
                os.kill(os.getpid(), signal.SIGKILL)
        except (FileExistsError, KeyError):
            pass
        time.sleep(1)
        self.body = unrolled(len, ("ab",), None, self.unroll)

    def time_interrupting(self, api):
        self.body()
'''
CHECKSUM, STEADY, QUEUED = (f"bench_work.{c}.time_{m}('py')" for c, m in
                            (("Checksum", "checksum"), ("Steady", "steady"), ("Queued", "queued")))
COMPILE, INTERRUPTING = "bench_work.Compile.time_compile('py')", "bench_work.Interrupting.time_interrupting('py')"
HEAVY = "bench_work.Heavy.time_heavy('py')"
valgrind_here = pytest.mark.skipif(callgrind.find()[0] is None, reason="no valgrind here")


@pytest.fixture
def stand_in(tmp_path):
    suite = tmp_path / "standin"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "bench_work.py").write_text(STAND_IN)
    return suite


def counted(stand_in, tmp_path, inject=("0", "0"), keep=False):
    sides = [paired.Side(name, name, name * 10, sys.executable, {"INJECT": flag})
             for name, flag in zip(("base", "head"), inject)]
    return instrpass.measure(sides, [CHECKSUM, STEADY, QUEUED], out=tmp_path / "out", jobs=10, keep=keep,
                             progress=lambda m: None, settings=paired.Settings(benchmark_dir=stand_in))


@pytest.mark.slow
@valgrind_here
def test_one_build_counted_twice_reads_the_same_and_nothing_moves(stand_in, tmp_path):
    """The same build counted in fresh processes, five layouts each: every case reads the same to the instruction
    (valgrind places memory the same way in every run), so nothing moves; each case's two runs are kept as callgrind
    files where asked (the median layout's)."""
    found = counted(stand_in, tmp_path, keep=True)
    (base, _), (head, _) = found["base"], found["head"]
    assert [c["per_call"] for c in base["cases"]] == [c["per_call"] for c in head["cases"]]
    assert len(base["cases"]) == 3 and all(c["per_call"] > 0 for c in base["cases"])
    assert instructions_read.moved(base, head) == {} and record_ok(base)
    kept = sorted(p.name for p in (tmp_path / "out" / "base" / "callgrind").iterdir())
    assert kept == sorted(f"{case}_py.{which}.callgrind.out" for case in ("Checksum", "Steady", "Queued")
                          for which in ("short", "long"))
    assert callgrind.read(tmp_path / "out" / "base" / "callgrind" / kept[0]).total > 0


@pytest.mark.slow
@valgrind_here
def test_a_compilation_counts_in_one_layout_and_the_pass_says_its_seconds_and_progress(
        stand_in, tmp_path, monkeypatch):
    monkeypatch.setattr(instrpass.Tally, "EVERY", 0.2)
    lines = []
    built = {"compiler": "gcc (GCC) 13.3.0", "cython": "3.2.4", "python": "3.12.3"}
    side = paired.Side("base", "base", "base" * 10, sys.executable, record={"packages": {
        "cuda_core": {"action": "reused", "built_with": built}, "cuda_bindings": {"action": "wheel"}}})
    found = instrpass.measure([side], [STEADY, COMPILE], out=tmp_path / "out", jobs=4, progress=lines.append,
                              settings=paired.Settings(benchmark_dir=stand_in))
    record, _ = found["base"]
    entry = {c["name"]: c for c in record["cases"]}
    assert len(entry[STEADY]["layouts"]) == instrpass.LAYOUTS and len(entry[COMPILE]["layouts"]) == 1
    assert all(c["seconds"] > 0 for c in record["cases"]) and record_ok(record)
    ticks = [line for line in lines if "case-layouts" in line]
    assert ticks and re.match(r"instructions: \d+/6 case-layouts, \d+ s; slowest \S+ \d+ s$", ticks[-1])
    assert "| seconds counting |" in instructions_read.markdown(record)
    assert record["built_with"] == {"cuda_core": built}  # what compiled the packages built from the commit
    # where the processes' seconds went: 6 processes (5 layouts of one, 1 of the other), each a worker start under
    # valgrind and its cases, all within the processes' lives
    spent = record["time"]
    assert spent["worker_starts"] > 0
    assert abs(spent["cases"] - sum(c["seconds"] for c in record["cases"])) <= 0.1 * len(record["cases"])
    assert spent["worker_starts"] + spent["cases"] <= spent["processes"] + 0.2
    assert f"({spent['processes']:g} process-seconds: {spent['worker_starts']:g} starting workers" in \
        instrpass.said(record)


def test_a_commits_cases_run_in_the_same_processes_in_every_pass_whatever_is_counted_beside_it():
    """A case's count depends on what ran before it in its process: a commit counted alone and counted beside
    another deals its cases alike, into PARTS processes per layout."""
    names = [f"bench_m.C{i}.time_c('py')" for i in range(20)]
    a, b = (paired.Side(n, n, n * 10, sys.executable) for n in ("a", "b"))

    def dealt(sides, side):
        return [(layout, i, part) for s, layout, i, part in instrpass.tasks_of(sides, names) if s is side]

    assert dealt([a], a) == dealt([b, a], a) == dealt([a, b], a)
    assert len(dealt([a], a)) == instrpass.PARTS * instrpass.LAYOUTS


def test_the_progress_line_names_the_case_counting_longest_once_it_has_run_long(monkeypatch):
    """A pass that stands still says what it waits on: the case in flight longest, past Tally.LONG seconds."""
    lines = []
    tally = instrpass.Tally(4, lines.append)
    tally.began(STEADY)
    assert "counting" not in tally.line()
    monkeypatch.setattr(instrpass.Tally, "LONG", -1.0)
    assert re.search(r"; counting \S+ for \d+ s$", tally.line())
    tally.done(STEADY, 1.0)
    assert "counting" not in tally.line() and "1/4 case-layouts" in tally.line()


@pytest.mark.slow
@valgrind_here
def test_a_call_of_heavy_instructions_is_counted_in_one_repeat_and_a_light_one_in_five(stand_in, tmp_path):
    """A repeat is there for a retried specialisation, a hundred instructions or so: a call of HEAVY or more, as
    the probe after PROBE_WARMUP bodies reads it, is counted once after those bodies alone."""
    side = paired.Side("base", "base", "base" * 10, sys.executable)
    record, _ = instrpass.measure([side], [HEAVY, STEADY], out=tmp_path / "out", jobs=4, progress=lambda m: None,
                                  settings=paired.Settings(benchmark_dir=stand_in))["base"]
    entry = {c["name"]: c for c in record["cases"]}
    assert entry[HEAVY]["per_call"] >= instructions.HEAVY and entry[HEAVY]["repeats"] == 1
    assert entry[STEADY]["repeats"] == instructions.FAST[1]
    # the heavy call's warm-up ends at the probe; the light one's goes on, uncounted
    assert entry[HEAVY]["warmup"] == instructions.PROBE_WARMUP * 100
    assert entry[STEADY]["warmup"] == instructions.FAST[2] * 100
    assert record["settings"]["probe"] == [instructions.PROBE_WARMUP, instructions.HEAVY]


@pytest.mark.slow
@valgrind_here
def test_an_interrupted_pass_hands_back_the_cases_counted_in_every_layout_marked_cut(
        stand_in, tmp_path, monkeypatch):
    """Two parts: Steady's five layouts first, then Interrupting's, whose first setup interrupts the pass. What had
    been counted in every layout comes back marked "cut"; a case counted in some layouts only is left out."""
    side = paired.Side("base", "base", "base" * 10, sys.executable, {"MARK": str(tmp_path / "interrupted")})
    with pytest.raises(instrpass.InstructionsCut) as cut:
        instrpass.measure([side], [STEADY, INTERRUPTING], out=tmp_path / "out", jobs=3, progress=lambda m: None,
                          settings=paired.Settings(benchmark_dir=stand_in))
    record, _ = cut.value.found["base"]
    assert record["cut"] is True and [c["name"] for c in record["cases"]] == [STEADY]
    assert len(record["cases"][0]["layouts"]) == instrpass.LAYOUTS
    assert "interrupted" in instrpass.said(record) and "Interrupted" in instructions_read.markdown(record)
    assert not instrpass.STOP.is_set()  # the next pass starts afresh


@pytest.mark.slow
@valgrind_here
def test_a_case_whose_worker_dies_of_the_interrupt_is_said_interrupted_not_failed(stand_in, tmp_path):
    """The interrupt reaches the command's workers too (a call's time limit signals the whole group): the case that
    worker was counting is named as stopped while being counted, and is no error."""
    side = paired.Side("base", "base", "base" * 10, sys.executable,
                       {"MARK": str(tmp_path / "interrupted"), "DIE": "1"})
    with pytest.raises(instrpass.InstructionsCut) as cut:
        instrpass.measure([side], [STEADY, INTERRUPTING], out=tmp_path / "out", jobs=10, progress=lambda m: None,
                          settings=paired.Settings(benchmark_dir=stand_in))
    record, _ = cut.value.found["base"]
    assert record["interrupted"] == [INTERRUPTING] and INTERRUPTING not in record["errors"]
    assert "interrupted while 1 were being counted" in instrpass.said(record)
    assert "1 of them stopped while being counted: `Interrupting('py')`" in instructions_read.markdown(record)


@pytest.mark.slow
@valgrind_here
def test_a_change_inside_compiled_code_is_counted_at_its_case_alone_with_its_function_named(stand_in, tmp_path):
    """A longer buffer for zlib.crc32 (a C function; no call that Python sees changes): Checksum moves by about an
    eighth, with the instructions gone into zlib's own function; Steady and Queued (drained between batches outside
    the count) stay."""
    found = counted(stand_in, tmp_path, inject=("0", "1"))
    (base, base_rows), (head, head_rows) = found["base"], found["head"]
    moved = instructions_read.moved(base, head)
    assert list(moved) == [CHECKSUM] and 0.08 < moved[CHECKSUM]["relative"] < 0.13
    into = instructions_read.went_into(instructions_read.function_changes(base_rows[CHECKSUM],
                                                                            head_rows[CHECKSUM]))
    assert "crc32" in into[0] and into[1].startswith("libz")


@pytest.mark.slow
@valgrind_here
def test_a_real_release_counted_names_its_stripped_methods(tmp_path):
    """cuda-core 1.2.2 from PyPI (stripped, as every cuda_core build): LaunchConfig(...) counted in five layouts, its
    functions named where Python reaches them, ``LaunchConfig.__init__`` among them; the harness floor beside it, a
    few hundred instructions at most where LaunchConfig runs thousands."""
    from conftest import NEWEST_WITH_NVRTC, RUNNER, make_env

    floor = "bench_harness.Floor.time_noop('noop')"
    side = paired.Side("head", "1.2.2", "1.2.2", str(make_env(NEWEST_WITH_NVRTC + RUNNER)))
    (found, rows), = instrpass.measure([side], [CONFIG, floor], out=tmp_path, jobs=5,
                                       progress=lambda m: None).values()
    values = {c["name"]: c["per_call"] for c in found["cases"]}
    assert values[floor] * 5 < values[CONFIG] and found["versions"]["cuda-core"] == "1.2.2"
    init = [r for r in rows[CONFIG] if r[0] == "LaunchConfig.__init__"]
    assert len(init) == 1 and init[0][1].startswith("_launch_config.") and init[0][3] > values[CONFIG] / 2


@pytest.mark.slow
@valgrind_here
def test_the_counts_command_counts_the_instructions_keeps_the_callgrind_files_and_prints_what_moved(
        tmp_path, git_repo, monkeypatch, capsys):
    """``cuda-bench counts REV REV2 --no-counts --out DIR`` in the environments compare builds (two real releases):
    each commit's instructions.json, its table and its functions, each case's two callgrind files, what moved
    printed with its functions; no work counts; with a GPU, a record per commit in instructions.jsonl."""
    from conftest import NEWEST_WITH_NVRTC, RUNNER, make_env

    from cuda_bench import cli
    from cuda_bench.commands import common
    from cuda_bench.commands import counts as counts_command
    from cuda_bench.compare import gate

    envs = {"v0.3.2": {"commit": "3" * 40, "python": str(make_env(["cuda-core[cu13]==0.3.2", *RUNNER]))},
            "v1.2.2": {"commit": "4" * 40, "python": str(make_env(NEWEST_WITH_NVRTC + RUNNER))}}
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(gate, "environments", lambda repo, revs, *a, **k: {rev: envs[rev] for rev in revs})
    monkeypatch.setattr(counts_command, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(common.machine, "has_gpu", lambda info: True)
    options = "bench_program.ProgramOptionsCreate.time_program_options_create('core')"
    argv = ["counts", "v0.3.2", "v1.2.2", "--repo", str(git_repo), "--machine", "m", "--out", str(tmp_path / "out"),
            "-b", "ProgramOptionsCreate|Floor", "--no-counts"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "### Instructions per call, `v0.3.2` → `v1.2.2`" in out and "### Work per call" not in out
    assert "- `ProgramOptionsCreate('core')`: " in out and "| function | in |" in out
    for rev in envs:
        folder = tmp_path / "out" / rev
        record = json.loads((folder / "instructions.json").read_text())
        assert [c["name"] for c in record["cases"]][-1] == options and record["rev"] == rev
        assert options in json.loads((folder / "instructions-functions.json").read_text())
        assert (folder / "callgrind" / "ProgramOptionsCreate_core.long.callgrind.out").is_file()
        assert not (folder / "counts.json").exists()
    written = records.read(tmp_path / "results" / "m", "instructions")
    assert [r["rev"] for r in written] == ["v0.3.2", "v1.2.2"]
    assert (tmp_path / "out" / "v0.3.2-v1.2.2-instructions.md").read_text() in out


@pytest.mark.slow
@valgrind_here
def test_compare_counts_the_instructions_after_the_timing_and_its_comment_says_them(stand_in, tmp_path, git_repo,
                                                                                    monkeypatch):
    """``cuda-bench compare`` makes the instruction pass after the timing (here the stand-in suite, the head's
    checksum over a longer buffer): summary.json keeps both records and the moved case's functions, the comment
    says "+N instructions per call (+x %)" beside its timing verdict; ``--no-instructions`` skips the pass."""
    from types import SimpleNamespace

    from cuda_bench import cli
    from cuda_bench.commands import compare as compare_command
    from cuda_bench.compare import gate, summaries

    sides = [paired.Side("base", "a", "a" * 40, sys.executable, {"INJECT": "0"}),
             paired.Side("head", "b", "b" * 40, sys.executable, {"INJECT": "1"})]
    timed = [timed_case(CHECKSUM, 1.09, 1.07, 1.11, "regression"), timed_case(STEADY, 1.0, 0.99, 1.01, "same")]
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(gate, "measure", lambda repo, base, head, **kw: (SimpleNamespace(sides=sides,
                                                                                             seconds=1.0), 0.0))
    monkeypatch.setattr(summaries, "summary", lambda *a: paired_data(timed, None) | {"instructions": None})
    real = compare_command.settings_of
    monkeypatch.setattr(compare_command, "settings_of", lambda args: real(args).__class__(benchmark_dir=stand_in))
    argv = ["compare", "a", "b", "--repo", str(git_repo), "--machine", "m", "-b", "Checksum|Steady", "--no-counts"]
    assert cli.main([*argv, "--out", str(tmp_path / "with")]) == 1  # the timing's regression
    data = json.loads((tmp_path / "with" / "summary.json").read_text())
    assert [c["name"] for c in data["instructions"]["head"]["cases"]] == [CHECKSUM, STEADY]
    assert list(data["instructions"]["functions"]) == [CHECKSUM]
    comment_text = (tmp_path / "with" / "summary.md").read_text()
    assert "- `Checksum('py')`: +" in comment_text and " beside ×1.090 [1.070, 1.110] regression: slower, with more" \
        in comment_text
    assert cli.main([*argv, "--out", str(tmp_path / "without"), "--no-instructions"]) == 1
    assert json.loads((tmp_path / "without" / "summary.json").read_text()).get("instructions") is None


def test_a_worker_outside_valgrind_says_it_cannot_count_instructions(stand_in):
    request = {"op": "instructions", "case": STEADY}
    proc = subprocess.run([sys.executable, "-m", "cuda_bench.run.worker", "--benchmark-dir", str(stand_in)],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    answer = json.loads(proc.stdout.splitlines()[0])
    assert "not running under valgrind" in answer["error"]


@valgrind_here
def test_a_valgrind_carried_with_callgrind_alone_runs_and_says_its_version(tmp_path, monkeypatch):
    """The carry holds valgrind's launcher and its callgrind tool alone (scripts/offline_carry.sh): found, and its
    version read, which the record keeps."""
    valgrind, _ = callgrind.find()
    lib = Path(valgrind).resolve().parent.parent / "libexec" / "valgrind"  # where a package puts its tools
    if not (lib / "callgrind-amd64-linux").is_file():
        pytest.skip(f"this valgrind's tools are not in {lib}")
    carried = tmp_path / "usr" / "libexec" / "valgrind"
    carried.mkdir(parents=True)
    for name in ("callgrind-amd64-linux", "vgpreload_core-amd64-linux.so", "default.supp"):
        shutil.copy(lib / name, carried / name)
    monkeypatch.setenv("VALGRIND_LIB", str(carried))
    found, why = callgrind.find()
    assert why is None and re.fullmatch(r"\d+\.\d+\.\d+", callgrind.version(found))


def test_without_valgrind_the_pass_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv(callgrind.VALGRIND_VARIABLE, str(tmp_path / "nowhere"))
    with pytest.raises(instrpass.InstructionsError, match="no valgrind at"):
        instrpass.measure([], [STEADY], out=tmp_path, progress=lambda m: None)


def test_without_valgrind_a_commits_pass_says_why_and_builds_nothing(monkeypatch, tmp_path):
    """run's and a window's pass over the commits they measured: where valgrind is not here it says so and exits 0
    before it builds an environment (here one would fail: the repository is no clone)."""
    monkeypatch.setenv(callgrind.VALGRIND_VARIABLE, str(tmp_path / "nowhere"))
    said = []
    status = instrpass.record_commits(tmp_path, ["a" * 40], conf={}, machine_name="m", results_dir=tmp_path,
                                      progress=said.append)
    assert status == 0 and said == [f"instructions not counted: no valgrind at {tmp_path / 'nowhere'} "
                                    f"({callgrind.VALGRIND_VARIABLE})"]


def test_a_window_counts_the_instructions_of_each_commit_the_history_has_not_counted_once(monkeypatch, tmp_path):
    """After a window (keep.into_history), as after its work counts: each of its commits the machine's
    instructions.jsonl lacks is counted once, an edge the history counted already never again; none left, no pass."""
    from cuda_bench.compare import keep

    counted = json.loads((FIXTURES / "records.json").read_text())["base"]
    records.append(tmp_path / "m", "instructions", counted)
    asked = []
    monkeypatch.setattr(instrpass, "record_commits", lambda repo, commits, **kw: asked.append(commits) or 0)
    new = ["b" * 40, "c" * 40]
    commits = [counted["commit"], new[0], new[0], new[1]]
    assert keep.instructions_new(tmp_path, commits, results_dir=tmp_path, machine_name="m", progress=print) == 0
    assert asked == [new]
    assert keep.instructions_new(tmp_path, [counted["commit"]], results_dir=tmp_path, machine_name="m",
                                 progress=print) == 0
    assert asked == [new]


COLD = '''
class Cold:
    """Times fresh processes on a clock of its own, as benchmarks/_coldstart.py's cases do."""
    params = [["py"]]
    param_names = ["api"]
    clock_ns = staticmethod(lambda: 0)

    def setup(self, api):
        raise AssertionError("set up")

    def time_cold(self, api):
        pass
'''


def test_a_cold_start_is_left_out_of_the_instruction_pass_with_why(stand_in):
    """A case on its own clock (a cold start) runs its work in fresh processes, which callgrind does not follow: the
    worker skips it before it sets it up, and says why."""
    (stand_in / "bench_cold.py").write_text(COLD)
    request = {"op": "instructions", "case": "bench_cold.Cold.time_cold('py')"}
    proc = subprocess.run([sys.executable, "-m", "cuda_bench.run.worker", "--benchmark-dir", str(stand_in)],
                          input=json.dumps(request) + "\n", capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    answer = json.loads(proc.stdout.splitlines()[0])
    assert answer == {"skip": "instructions not counted: a cold start: its work runs in the fresh processes it "
                              "starts, which callgrind does not follow (the worker's own instructions would be its "
                              "wait for them)"}
