"""Instructions per call: what the calling thread executes per call of a case's timed body, counted
by valgrind's callgrind (``cuda_bench.foundations.callgrind``) in a worker process of its own, never
while timing. It sees inside compiled code: a Cython method's own work, CPython's, the driver's code
that runs in the calling thread, where the other counts (``cuda_bench.foundations.counts``) see only
the calls that Python, CUPTI or the NVRTC module see.

How a case is counted (:func:`count`, in a ``cuda_bench.run.worker`` run under callgrind, after the
case's own ``setup``):

* **warm-up**: :data:`WARMUP_BODIES` runs of the body (:data:`SLOW` ``warmup`` for an operation the
  suite times one call per body), uninstrumented: what the first calls fill is filled, and the
  interpreter has specialised what it can of the body's call sites.
* **probe** (:data:`FAST` only): after the first :data:`PROBE_WARMUP` bodies of the warm-up,
  one body counted (a batch, for a queued operation). A case of :data:`HEAVY` instructions per
  call or more is counted from there, in one repeat: what the rest of the warm-up and the repeats
  are for, a retried specialisation of a hundred instructions or so, is under a thousandth of a
  per cent of its call, and its warm-up under valgrind would cost more than its count. Any other
  case runs the rest of the warm-up first (the probe's bodies come on top of it).
* **runs**: instrumentation on, then each repeat counts a short and a long run (:data:`FAST`: 1
  and 3 runs of the body, five times, once for a heavy case; :data:`SLOW`: 1 and 2, once; of a
  queued operation, whole batches, drained between batches outside the count), and the same
  around a body that does nothing; collection on in the calling thread only, around the runs; a
  dump of each.
* **per call** (:func:`per_call`): each repeat's long run less its short run, less the same for the
  body that does nothing, over the calls between them: what every run does once (switching the
  count on and off, the loop's start) cancels, and the loop itself with the body that does
  nothing. The value is the median over the repeats.
* **spread** (:func:`per_call`): the range of the repeats' values, the highest and the lowest left
  out where there are five, as a fraction of the value. CPython retries a call site it cannot
  specialise after 1, 2, 4, ... 4096 runs; a retry costs a hundred instructions or so per site
  and lands in one run of the many, which the median and the trimmed range leave out.

The instruction pass (``cuda_bench.compare.instrpass``) counts each case so in processes of several
memory layouts (its ``LAYOUTS``; a compilation in one, :data:`ONE_LAYOUT`), and takes the median of
theirs.

Standard library only: it runs inside benchmark environments (the paired workers).
"""

from __future__ import annotations

import gc
import os
import statistics
import types

from cuda_bench.foundations import callgrind

WARMUP_BODIES = 64
#: (run lengths in bodies or batches, repeats, warm-up bodies) of an operation the suite times 100
#: calls per body, and of one it times one call per body (tens of microseconds or more: a compile
#: runs about a hundred million instructions, several seconds under callgrind)
FAST = ((1, 3), 5, WARMUP_BODIES)
SLOW = ((1, 2), 1, 8)
#: instructions per call (read by the probe) from which a case is counted after
#: :data:`PROBE_WARMUP` bodies of warm-up, in one repeat: what the rest of the warm-up and the
#: repeats are for, a retried specialisation of a hundred instructions or so, is then under a
#: thousandth of a per cent of the call, and each further body counts hundreds of millions (a
#: launch with 512 arguments: 2.4 million a call; 64 bodies of warm-up, 6,400 calls, take longer
#: under valgrind uninstrumented than the 400 calls counted). A case whose count crossed it between
#: two builds would change how many runs come before the next cases in its process; the suite's
#: lie far from it (on the H100 the nearest, 89,000 and 135,000)
HEAVY = 100_000
#: the warm-up bodies before the probe: a heavy case's whole warm-up (800 calls of a body of 100)
PROBE_WARMUP = 8
#: operations whose work runs in threads they start: only the calling thread is counted, which
#: waits, so their count would say nothing of the work (and run each thread instrumented)
OTHER_THREADS = {
    "CompileThreads": "its compilations run in threads it starts, and only the calling thread's "
    "instructions are counted"
}


#: operations counted in the first memory layout alone (``cuda_bench.compare.instrpass.LAYOUTS``
#: for the others): a compilation runs about a hundred million instructions a call, where what a
#: layout moves (a type-cache collision, a buffer grown in place) is hundreds, and each layout's
#: count of it takes minutes under callgrind
ONE_LAYOUT = frozenset({"Compile", "CompileOptions"})


def plan(unroll):
    """(lengths, repeats, warm-up bodies) of an operation of ``unroll`` calls per body."""
    return FAST if unroll > 1 else SLOW


def _noop():
    pass


def _runs(fn, bodies):
    for _ in range(bodies):
        fn()


def _runner():
    """A loop of its own (a copy of :func:`_runs`' code): the body's and the body that does nothing
    never share a call site, whose specialisation the other would undo."""
    return types.FunctionType(_runs.__code__.replace(), globals(), "_runs")


def _counted(requests, runs, fn, bodies, batch, drain):
    """``bodies`` runs of ``fn`` through the loop ``runs``, collected in this thread: in batches of
    ``batch`` with ``drain()`` after each, outside the count, for a queued operation."""
    done = 0
    while done < bodies:
        k = min(batch or bodies, bodies - done)
        requests.toggle()
        try:
            runs(fn, k)
        finally:
            requests.toggle()
        if drain is not None:
            drain()
        done += k


def count(body, *, unroll=1, batch=None, drain=None, label="", template=None, requests=None):
    """Count ``body`` (``unroll`` calls a run; ``batch``: runs per sample of a queued operation,
    ``drain()`` after each) under callgrind: {"runs": [{"body": bool, "repeat", "bodies", "calls",
    "file"}], "warmup": uncounted bodies, "unroll"} (the module docstring says how). ``template``:
    the worker's --callgrind-out-file (default ``$CUDA_BENCH_CALLGRIND_OUT``)."""
    requests = requests or callgrind.requests()
    if not requests.running():
        raise RuntimeError("not running under valgrind: instructions are counted by callgrind")
    template = template or os.environ[callgrind.OUT_VARIABLE]
    lengths, repeats, warmup = plan(unroll)
    step = batch or 1
    warmup = -(-warmup // step) * step
    first = min(warmup, -(-PROBE_WARMUP // step) * step) if repeats > 1 else warmup
    loops = {"noop": _runner(), "body": _runner()}
    enabled = gc.isenabled()
    gc.disable()
    runs = []
    try:
        _warm(loops, body, first // step, step, drain)
        requests.instrument(True)
        try:
            if repeats > 1:
                _counted(requests, loops["body"], body, step, batch, drain)
                number = requests.dump(f"{label} probe x{step}")
                probe_file = callgrind.dump_file(template, os.getpid(), number)
                try:
                    probed = heavy(probe_file, step * unroll)
                finally:
                    os.unlink(probe_file)
                if probed:
                    repeats, warmup = 1, first
                else:
                    requests.instrument(False)
                    _warm(loops, body, (warmup - first) // step, step, drain)
                    requests.instrument(True)
            for repeat in range(repeats):
                for length in lengths:
                    for what, fn in (("noop", _noop), ("body", body)):
                        bodies = length * step
                        queued = drain if fn is body else None
                        _counted(requests, loops[what], fn, bodies, batch, queued)
                        number = requests.dump(f"{label} {what} x{bodies} repeat {repeat + 1}")
                        runs.append(
                            {
                                "body": fn is body,
                                "repeat": repeat,
                                "bodies": bodies,
                                "calls": bodies * unroll,
                                "file": callgrind.dump_file(template, os.getpid(), number),
                            }
                        )
        finally:
            requests.instrument(False)
    finally:
        if enabled:
            gc.enable()
    return {"runs": runs, "warmup": warmup, "unroll": unroll}


def _warm(loops, body, batches, step, drain):
    """``batches`` runs of ``step`` bodies and of the body that does nothing, uncounted (drained
    after each, for a queued operation)."""
    for _ in range(batches):
        loops["body"](body, step)
        loops["noop"](_noop, step)
        if drain is not None:
            drain()


def heavy(probe_file, calls):
    """Whether the probe's dump (``calls`` calls, with its loop and switches) counted :data:`HEAVY`
    instructions per call or more, read from its last line (:func:`callgrind.total`): the
    costs a value is read from, not the header's summary, which is the process's so far."""
    total = callgrind.total(probe_file)
    return total is not None and total / calls >= HEAVY


# --- what the counts say --------------------------------------------------------------------------
def _lengths(runs):
    sizes = sorted({r["bodies"] for r in runs})
    return sizes[0], sizes[-1]


def repeat_values(runs, totals):
    """{repeat: instructions per call} of a case's counted ``runs`` (:func:`count`), ``totals``
    {file: instructions} of their dumps."""
    short, long = _lengths(runs)
    calls = {r["bodies"]: r["calls"] for r in runs}
    out = {}
    for repeat in sorted({r["repeat"] for r in runs}):
        mine = {(r["body"], r["bodies"]): totals[r["file"]] for r in runs if r["repeat"] == repeat}
        work = mine[(True, long)] - mine[(True, short)]
        harness = mine[(False, long)] - mine[(False, short)]
        out[repeat] = (work - harness) / (calls[long] - calls[short])
    return out


def per_call(runs, totals):
    """(instructions per call, spread, the repeats' values, the median repeat) of a case's counted
    ``runs`` (:func:`count`) with ``totals`` {file: instructions} of their dumps: the median of the
    repeats' values, and the range of the middle three of them (of all, where there are three or
    fewer) as a fraction of it (0 where the value is 0)."""
    values = repeat_values(runs, totals)
    ordered = sorted(values, key=values.get)
    middle = ordered[(len(ordered) - 1) // 2]
    value = statistics.median(values.values())
    kept = [values[r] for r in (ordered[1:-1] if len(ordered) > 3 else ordered)]
    spread = (max(kept) - min(kept)) / abs(value) if value else 0.0
    return value, spread, [values[r] for r in sorted(values)], middle


def median_runs(runs, repeat):
    """{"short": run, "long": run}: the body's two runs of ``repeat`` (the median one: what a case's
    functions and kept files are taken from)."""
    short, long = _lengths(runs)
    mine = {r["bodies"]: r for r in runs if r["body"] and r["repeat"] == repeat}
    return {"short": mine[short], "long": mine[long]}


def functions_per_call(pick, dumps, least=0.5):
    """{(function, object): [self, inclusive] per call} of a case from the dumps (``dumps``: {file:
    callgrind.Dump}) of its short and long runs ``pick`` (:func:`median_runs`): the long one's
    counts less the short one's, over the calls between them; the functions whose inclusive count
    per call is at least ``least`` instructions either way."""
    short, long = (dumps[pick[which]["file"]].functions for which in ("short", "long"))
    between = pick["long"]["calls"] - pick["short"]["calls"]
    out = {}
    for key in short.keys() | long.keys():
        a, b = short.get(key, (0, 0)), long.get(key, (0, 0))
        own, inclusive = (b[0] - a[0]) / between, (b[1] - a[1]) / between
        if abs(inclusive) >= least:
            out[key] = [round(own, 2), round(inclusive, 2)]
    return out
