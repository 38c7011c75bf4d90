"""The work each call does: CUDA API calls by name, NVRTC calls, Python calls, C calls and net
memory blocks per call of a case's timed body, counted in a pass of its own (never while timing),
and the record of each (``cuda_bench.results.counts_read`` says what it means and how two differ).

A timing verdict says that a call got slower, not why, and a change below a case's threshold passes
unseen; most of cuda-python's latency fixes were about work that can be counted (fewer CUDA API
calls, a lookup no longer repeated on every call, a stream no longer created per call). Counts have
no noise and need no threshold: any difference between two commits is a difference of work.

How a case is counted (:func:`count_work`, in a ``cuda_bench.run.worker`` after the case's own
``setup``):

* **warm-up**: the case's setup has already run its body once (``benchmarks._op``); one more run of
  the counted size runs uncounted, so that what a first call fills (a library loaded, a cache, an
  interned string) is not counted. The first calls are left out, not counted separately.
* each count is taken over ``calls`` calls (whole bodies of ``unroll`` calls; for a ``queued``
  operation whole batches of its sample, drained between batches outside the count, as a timed
  sample is), **twice**: ``unsteady`` names the counts that the two runs did not agree on (work that
  depends on where memory lies, say), which a comparison leaves out. Per call is the second run's
  total divided by its calls: an integer, or an exact fraction (given to 6 decimals) for work that
  recurs every few calls.
* what the counting harness itself does (its loop, its own calls, the integers it keeps) is counted
  too, by the same harness around a body that does nothing, and subtracted.
* **Python calls** and **C calls** (:func:`python_mechanism`): on Python 3.12+ ``sys.monitoring``
  (PY_START: a Python function starts, generators' resumptions not counted; CALL: a call made from
  Python bytecode to anything that is not a Python function: builtins, Cython functions, types),
  before it ``sys.setprofile`` ('call': a Python frame starts, generators' resumptions included;
  'c_call': a call from Python of a builtin function or method, which leaves out Cython functions
  and types). The two differ, so the record names the mechanism and two records are compared only
  where it is the same. ``sys.setprofile`` sees the counting thread only.
* **net blocks**: the change of ``sys.getallocatedblocks()`` (the interpreter's small-object blocks)
  over the calls, divided by them; with the garbage collector off, as in a timed sample, so a
  reference cycle a call leaves counts until a collection would free it.
* **CUDA calls** (:func:`cuda_counter`): CUPTI's callback API (``cupti-python``), every driver and
  runtime API entry (API_ENTER) however cuda.bindings resolved the function (cuGetProcAddress), by
  the name CUPTI gives it. Without cupti-python, or where CUPTI cannot start (no driver), ``cuda``
  is None and ``cuda_why`` says why.
* **NVRTC calls** (:func:`nvrtc_counted`): the calls of ``cuda.bindings.nvrtc``'s functions that are
  looked up on that module at call time or bound after counting began (the case is set up again with
  counting wrappers in place, in a pass of its own): from Python, and from Cython code that calls
  them as Python functions. NVRTC calls made from Cython through ``cynvrtc`` are not seen, nor
  functions bound before (``from ... import``).

Standard library only, and cupti-python where it is installed: it runs inside benchmark environments
(the paired workers), where nothing else of the project is installed.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import gc
import itertools
import sys
import types
from fractions import Fraction

#: what no count sees, said wherever counts are shown: the pages, the comment, the reports
UNSEEN = (
    "Not counted: work inside compiled code that makes no Python, CUDA or NVRTC call it can see (a "
    "Cython function calling another from a .pyx method, the driver's own time); a change there "
    "shows in the timing only."
)
# calls counted per run (whole bodies): the unrolled body's 100, or a queued operation's batch
CALLS = 100
# for an operation the suite times one call per body (unroll = 1: tens of microseconds or more)
SLOW_CALLS = 10
RUNS = 2  # counted runs per count; a count on which they disagree is ``unsteady``
NVRTC_WHY = (
    "calls of cuda.bindings.nvrtc functions looked up on that module when called (from Python, or "
    "from Cython as Python functions), counted in a setup of their own; NVRTC calls made from "
    "Cython through cynvrtc, and functions bound before counting began, are not seen"
)


# --- what the numbers are -------------------------------------------------------------------------
def per_call(total, calls):
    """``total`` over ``calls``: an int where it divides, else the exact fraction to 6 decimals."""
    value = Fraction(total, calls)
    return int(value) if value.denominator == 1 else round(float(value), 6)


def python_mechanism():
    """How Python and C calls are counted in this interpreter: "sys.monitoring" (3.12+) or
    "sys.setprofile"."""
    return "sys.monitoring" if hasattr(sys, "monitoring") else "sys.setprofile"


def _noop():
    pass


def _bodies(k, body):
    for _ in itertools.repeat(None, k):
        body()


def _run(body, bodies, batch, drain, begin, end):
    """``bodies`` runs of ``body`` in batches of ``batch``: ``begin()`` and ``end()`` around each
    batch, ``drain()`` (queued work) after it, outside the count."""
    done = 0
    while done < bodies:
        k = min(batch, bodies - done)
        begin()
        try:
            _bodies(k, body)
        finally:  # a call that raises leaves no profiler, monitoring or CUPTI counting behind
            end()
        if drain is not None:
            drain()
        done += k


# --- one counter per kind of work: each makes (begin, end, read) for one run ----------------------
def _blocks():
    state = [0, 0]
    getallocatedblocks = sys.getallocatedblocks

    def begin():
        state[0] = getallocatedblocks()

    def end():
        state[1] += getallocatedblocks() - state[0]

    return begin, end, lambda: {"net_blocks": state[1]}


def _setprofile():
    counted = [0, 0]

    def profile(frame, event, arg):
        if event == "call":
            counted[0] += 1
        elif event == "c_call":
            counted[1] += 1

    def begin():
        sys.setprofile(profile)

    def end():
        sys.setprofile(None)

    return begin, end, lambda: {"python_calls": counted[0], "c_calls": counted[1]}


class _Monitoring:
    """A ``sys.monitoring`` tool for one count (3.12+): PY_START and CALL events, global while
    on."""

    def __enter__(self):
        monitoring = sys.monitoring
        free = [i for i in (monitoring.PROFILER_ID, 3, 4, 5) if monitoring.get_tool(i) is None]
        if not free:
            raise RuntimeError("every sys.monitoring tool id that counting may take is in use")
        self.tool = free[0]
        monitoring.use_tool_id(self.tool, "cuda-bench counts")
        return self

    def __exit__(self, *exc):
        monitoring = sys.monitoring
        monitoring.set_events(self.tool, 0)
        for event in (monitoring.events.PY_START, monitoring.events.CALL):
            monitoring.register_callback(self.tool, event, None)
        monitoring.free_tool_id(self.tool)

    def counter(self):
        monitoring, tool = sys.monitoring, self.tool
        events = monitoring.events.PY_START | monitoring.events.CALL
        counted = [0, 0]
        function = types.FunctionType

        def on_start(code, offset):
            counted[0] += 1

        def on_call(code, offset, called, arg0):
            if not isinstance(getattr(called, "__func__", called), function):
                counted[1] += 1

        monitoring.register_callback(tool, monitoring.events.PY_START, on_start)
        monitoring.register_callback(tool, monitoring.events.CALL, on_call)

        def begin():
            monitoring.set_events(tool, events)

        def end():
            monitoring.set_events(tool, 0)

        return begin, end, lambda: {"python_calls": counted[0], "c_calls": counted[1]}


# --- CUDA calls through CUPTI ---------------------------------------------------------------------
class _Cupti:
    """One CUPTI subscriber for the process (CUPTI allows one), made on first use; driver and
    runtime API callbacks enabled only while a count runs."""

    def __init__(self):
        self.why = None
        self.seen = collections.Counter()
        self.on = False
        self.names = {}
        try:
            from cupti import cupti
        except ImportError as exc:
            self.why = f"cupti-python is not installed in this environment ({exc})"
            return
        self.cupti = cupti
        self.domains = (cupti.CallbackDomain.DRIVER_API, cupti.CallbackDomain.RUNTIME_API)
        enter = int(cupti.ApiCallbackSite.API_ENTER)
        seen = self.seen

        def callback(userdata, domain, cbid, data):
            if userdata.on and data.callback_site == enter:
                seen[(int(domain), int(cbid))] += 1

        try:
            self.subscriber = cupti.subscribe(callback, self)
        # CUPTI's own errors: no driver, another subscriber (a profiler)
        except Exception as exc:  # noqa: BLE001
            self.why = f"CUPTI could not start: {type(exc).__name__}: {exc}"
            return
        import atexit

        atexit.register(self.close)
        version = _dist_version("cupti-python")
        self.how = (
            f"CUPTI callback API (cupti-python {version}): every CUDA driver and runtime API "
            "entry, however cuda.bindings resolved it"
        )

    def close(self):
        """Unsubscribe at the worker's exit."""
        try:
            self.enable(False)
            self.cupti.unsubscribe(self.subscriber)
        except Exception:  # noqa: BLE001 -- CUPTI at exit: nothing left to count
            pass

    def enable(self, on):
        for domain in self.domains:
            self.cupti.enable_domain(int(on), self.subscriber, domain)

    def name(self, key):
        if key not in self.names:
            domain, cbid = key
            try:
                self.names[key] = str(self.cupti.get_callback_name(domain, cbid))
            except Exception:  # noqa: BLE001 -- a callback id this CUPTI cannot name
                self.names[key] = (
                    f"{'driver' if domain == int(self.domains[0]) else 'runtime'} callback {cbid}"
                )
        return self.names[key]

    def counter(self):
        self.seen.clear()

        def begin():
            self.on = True

        def end():
            self.on = False

        def read():
            found = collections.Counter()
            for key, count in self.seen.items():
                found[self.name(key)] += count
            return {"cuda": dict(found)}

        return begin, end, read


def _dist_version(name):
    import importlib.metadata

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "?"


@functools.cache
def cuda_counter():
    """This process's CUPTI subscriber (``.why``: None, or why CUDA calls cannot be counted
    here)."""
    return _Cupti()


# --- NVRTC calls seen from Python -----------------------------------------------------------------
@contextlib.contextmanager
def nvrtc_counted():
    """Inside: ``cuda.bindings.nvrtc``'s functions replaced by counting wrappers (set up the case
    inside, so that what it binds is the wrapper). Yields (counter, on): ``on[0]`` switches
    counting; None where cuda.bindings has no nvrtc module."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        yield None
        return
    originals = {
        name: value
        for name, value in vars(nvrtc).items()
        if name.startswith("nvrtc") and callable(value) and not isinstance(value, type)
    }
    counter, on = collections.Counter(), [False]

    def counting(name, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if on[0]:
                counter[name] += 1
            return fn(*args, **kwargs)

        return wrapper

    for name, fn in originals.items():
        setattr(nvrtc, name, counting(name, fn))
    try:
        yield counter, on
    finally:
        for name, fn in originals.items():
            setattr(nvrtc, name, fn)


def _nvrtc(counter, on):
    def begin():
        counter.clear()
        on[0] = True

    def end():
        on[0] = False

    return begin, end, lambda: {"nvrtc": dict(counter)}


# --- a case's count -------------------------------------------------------------------------------
def plan(unroll, calls, batch=None):
    """(bodies per run, bodies per batch): at least ``calls`` calls in whole bodies of ``unroll``,
    and for a queued operation (``batch``: bodies per sample) in whole batches."""
    bodies = max(1, -(-int(calls) // int(unroll)))
    if batch:
        bodies = -(-bodies // batch) * batch
    return bodies, (batch or bodies)


def _count(make, body, bodies, batch, drain, runs, baseline):
    """``runs`` counts of ``bodies`` runs of ``body``, each with a fresh counter from ``make()``,
    less what the same harness counts around a body that does nothing (``baseline``). [{name:
    total}] per run."""

    def once(what):
        begin, end, read = make()
        _run(what, bodies, batch, drain if what is body else None, begin, end)
        return read()

    base = once(_noop) if baseline else {}
    found = []
    for _ in range(runs):
        got = once(body)
        found.append(
            {key: value - base[key] if key in base else value for key, value in got.items()}
        )
    return found


def count_work(
    body, *, unroll=1, calls=CALLS, batch=None, drain=None, runs=RUNS, warmup=True, cuda=True
):
    """The work per call of ``body`` (a function of no arguments that makes ``unroll`` calls of the
    operation): {"calls", "python_calls", "c_calls", "mechanism", "net_blocks", "cuda", "cuda_why",
    "unsteady"}. Module docstring: the warm-up, the runs, the baseline that is subtracted (the call
    of ``body`` itself is the baseline's too: what it calls is counted)."""
    bodies, batch = plan(unroll, calls, batch)
    counted = bodies * int(unroll)
    enabled = gc.isenabled()
    gc.disable()
    try:
        if warmup:
            _run(body, bodies, batch, drain, _noop, _noop)
        runs_of = {}
        runs_of["blocks"] = _count(_blocks, body, bodies, batch, drain, runs, baseline=True)
        if hasattr(sys, "monitoring"):
            with _Monitoring() as tool:
                runs_of["python"] = _count(
                    tool.counter, body, bodies, batch, drain, runs, baseline=True
                )
        else:
            runs_of["python"] = _count(_setprofile, body, bodies, batch, drain, runs, baseline=True)
        cupti = cuda_counter() if cuda else None
        why = "not asked for" if cupti is None else cupti.why
        if why is None:
            cupti.enable(True)
            try:
                runs_of["cuda"] = _count(
                    cupti.counter, body, bodies, batch, drain, runs, baseline=False
                )
            finally:
                cupti.enable(False)
    finally:
        if enabled:
            gc.enable()
    unsteady = sorted(
        key for found in runs_of.values() for key in found[-1] if found[0][key] != found[-1][key]
    )
    last = {key: value for found in runs_of.values() for key, value in found[-1].items()}
    return {
        "calls": counted,
        "python_calls": per_call(last["python_calls"], counted),
        "c_calls": per_call(last["c_calls"], counted),
        "mechanism": python_mechanism(),
        "net_blocks": per_call(last["net_blocks"], counted),
        "cuda": per_call_map(last["cuda"], counted) if "cuda" in last else None,
        "cuda_why": cupti.how if why is None else why,
        "unsteady": unsteady,
    }


def count_nvrtc(
    body, counted, *, unroll=1, calls=CALLS, batch=None, drain=None, runs=RUNS, warmup=True
):
    """NVRTC calls per call of ``body``, set up inside :func:`nvrtc_counted` (``counted``: what it
    yielded): ({name: per call}, ["nvrtc"] where the two runs disagreed, else [])."""
    bodies, batch = plan(unroll, calls, batch)
    enabled = gc.isenabled()
    gc.disable()
    try:
        if warmup:
            _run(body, bodies, batch, drain, _noop, _noop)
        found = _count(lambda: _nvrtc(*counted), body, bodies, batch, drain, runs, baseline=False)
    finally:
        if enabled:
            gc.enable()
    return per_call_map(found[-1]["nvrtc"], bodies * int(unroll)), [] if found[0] == found[
        -1
    ] else ["nvrtc"]


def per_call_map(totals, calls):
    return {name: per_call(total, calls) for name, total in sorted(totals.items()) if total}
