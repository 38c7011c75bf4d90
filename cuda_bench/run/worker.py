"""One benchmark process of the paired engine: one environment (one build of cuda-python), one core.

    python -m cuda_bench.run.worker [--benchmark-dir DIR] [--core N]

``cuda_bench.compare.paired`` starts workers two at a time, one per build, pinned to the same core,
with a fixed hash seed (and address-space randomisation on, or off with ``--layouts fixed``), and
asks them for samples in turn. A worker sets up the suite's own benchmark classes (their
``setup``/``teardown``, the timed body they bind as ``self.body``, the ``drain`` of queued GPU
work): one definition of each operation, and the same timed body asv times.

Requests are JSON lines on stdin; each gets one JSON line back on the protocol pipe (the process's
original stdout: file descriptor 1 is pointed at stderr, so a library that prints cannot corrupt
the protocol)::

    {"op": "hello"}                -> {"ok": true, "pid", "core", "aslr_off", "versions": {...}}
    {"op": "setup", "case": NAME}  -> {"ok": true, "unroll": U, "number": N or null}
                                      | {"skip": reason} | {"error": text}
    {"op": "sample", "n": N}       -> {"ns": time of N calls}; then the drain, untimed
                                      (queued operations)
    {"op": "teardown"}             -> {"ok": true} | {"error": text}
    {"op": "count", "case": NAME, "calls": N, "slow_calls": M}
                                   -> {"ok": true, "calls", "cuda": {name: per call} | null,
                                       "cuda_why", "nvrtc": {name: per call}, "nvrtc_why",
                                       "python_calls", "c_calls", "mechanism", "net_blocks",
                                       "unsteady"} | {"skip": reason} | {"error": text}
    {"op": "instructions", "case": NAME}
                                   -> {"ok": true, "runs": [{"body", "repeat", "bodies", "calls",
                                       "file"}], "warmup", "unroll"} | {"skip": reason}
                                      | {"error": text}          (under callgrind only)
    {"op": "names"}                -> {"ok": true, "names": {object: {address: Python name}}}
    {"op": "over_cpp", "case": NAME, "twin": ID, "seconds": S, "sample_ns": T, "min_groups": G}
                                   -> {"ok": true, "groups": [[c1, p1, p2, c2], ...],
                                       "calls": [py, cpp]}
                                      | {"skip": reason} | {"error": text}
    {"op": "quit"}                 -> (exits)

``count`` counts the work per call of a case's timed body instead of timing it
(``cuda_bench.foundations.counts``): N calls (M for an operation the suite times one call per body),
after a warm-up; then the case is set up a second time with cuda.bindings' NVRTC functions wrapped,
to count the NVRTC calls seen from Python. It sets the case up and tears it down itself.

``instructions`` counts the instructions of a case's calls in a worker run under callgrind
(``cuda_bench.foundations.instructions``): the dump file of each counted run, which the pass reads;
``names`` gives the Python names of the C functions callgrind finds no symbol for
(``cuda_bench.foundations.callgrind``).

``over_cpp`` times a Python case against its C++ twin in this one process (the suite's
``bench_cpp.twins()``, a shared library): ABBA groups of C++, Python, Python, C++ samples, each
about ``sample_ns`` long, for ``seconds``; the group values are nanoseconds per call.

A sample is N calls of the operation: N / U runs of the class's body, which makes U calls
(``unroll``; ``number`` is the fixed sample of a queued operation, in calls). The garbage collector
is off while a sample runs, as in ``timeit``. A class with a clock of its own (``clock_ns``, a
function of no arguments in nanoseconds: the cold starts of ``benchmarks._coldstart``, whose clock
advances by what each body measured in the processes it started) is timed on that clock instead of
``time.perf_counter_ns``, with a fixed ``number`` of bodies a sample, and not counted.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import json
import os
import sys
import time
import traceback

#: why the counting pass leaves out a case on its own clock (a cold start:
#: ``benchmarks._coldstart``)
COLD_COUNT = (
    "a cold start: its work is a fresh process's, which the counting pass's imports record "
    "(python -X importtime)"
)
#: why the instruction pass leaves out a case on its own clock: callgrind counts the calling
#: thread of the worker, and a cold start's work runs in the fresh processes it starts
COLD_INSTRUCTIONS = (
    "a cold start: its work runs in the fresh processes it starts, which callgrind does not "
    "follow (the worker's own instructions would be its wait for them)"
)


def run_bodies(k, body):
    """The timed loop: ``k`` runs of the benchmark's body."""
    for _ in range(k):
        body()


def versions():
    found = {}
    for dist in (
        "cuda-core",
        "cuda-bindings",
        "cuda-pathfinder",
        "cupy-cuda13x",
        "cupy-cuda12x",
        "numpy",
    ):
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    found["python"] = sys.version.split()[0]
    return found


def aslr_off():
    """Whether this process's layout is fixed: started under ``setarch -R`` (ADDR_NO_RANDOMIZE), or
    on a kernel that randomises nothing (``kernel.randomize_va_space = 0``)."""
    try:
        with open("/proc/self/personality") as f:
            if int(f.read(), 16) & 0x0040000:  # ADDR_NO_RANDOMIZE
                return True
        with open("/proc/sys/kernel/randomize_va_space") as f:
            return f.read().strip() == "0"
    except (OSError, ValueError):
        return False


def calls_for(sample, target_ns, step=1, most=1 << 22):
    """Calls per sample (whole multiples of ``step``) grown until one ``sample(calls)`` lasts
    ``target_ns``."""
    calls = step
    while True:
        elapsed = sample(calls)
        if elapsed >= target_ns or calls >= most:
            return calls
        grown = min(most, max(2 * calls, int(calls * target_ns / max(elapsed, 1) * 1.1)))
        calls = -(-grown // step) * step


class Worker:
    def __init__(self, benchmark_dir, core=None):
        from cuda_bench.foundations import suite

        if core is not None:
            os.sched_setaffinity(0, {core})
        self.core = core
        self.cases = suite.cases(benchmark_dir)
        self.cpp = suite.cpp_module(benchmark_dir)  # the C++ twins, if the suite has them
        self.current = None  # (instance, case, drain, unroll)
        self.clock = time.perf_counter_ns  # the current case's clock

    def hello(self, _request):
        # the C++ twins' version (asv's, too)
        twins = getattr(getattr(self.cpp, "Cpp", None), "version", None)
        return {
            "ok": True,
            "pid": os.getpid(),
            "core": self.core,
            "aslr_off": aslr_off(),
            "versions": versions(),
            "twins": twins,
            "cases": len(self.cases),
        }

    def setup(self, request):
        if self.current is not None:
            self.teardown({})
        case = self.cases.get(request["case"])
        if case is None:
            return {"skip": f"this build's suite has no {request['case']}"}
        instance = case.cls()
        try:
            if hasattr(instance, "setup"):
                instance.setup(*case.params)
        except NotImplementedError as exc:  # asv's skip (benchmarks._compat.Unavailable is one)
            return {"skip": str(exc) or type(exc).__name__}
        if not callable(getattr(instance, "body", None)):
            self._teardown(instance, case)
            return {"error": f"{case.name}: setup binds no self.body, so there is no call to time"}
        unroll = int(getattr(case.cls, "unroll", 1))
        queued = bool(getattr(case.cls, "queued", False))
        drain = getattr(instance, "drain", None) if queued else None
        clock = getattr(case.cls, "clock_ns", None)
        self.current = (instance, case, drain, unroll)
        self.clock = clock or time.perf_counter_ns
        return {
            "ok": True,
            "unroll": unroll,
            "number": getattr(case.cls, "number", 1) * unroll if queued or clock else None,
        }

    def sample(self, request):
        instance, case, drain, unroll = self.current
        n = int(request["n"])
        if n % unroll:
            return {
                "error": f"{case.name}: a sample of {n} calls is not whole runs of its "
                f"{unroll}-call body"
            }
        body, clock = instance.body, self.clock
        enabled = gc.isenabled()
        gc.disable()
        try:
            start = clock()
            run_bodies(n // unroll, body)
            elapsed = clock() - start
        finally:
            if enabled:
                gc.enable()
        if drain is not None:
            drain()
        return {"ns": elapsed}

    def count(self, request):
        from cuda_bench.foundations import counts

        case = self.cases.get(request["case"])
        if case is not None and getattr(case.cls, "clock_ns", None):
            return {"skip": COLD_COUNT}
        answer = self.setup(request)
        if "ok" not in answer:
            return answer
        instance, case, drain, unroll = self.current
        calls = (
            int(request.get("calls", counts.CALLS))
            if unroll > 1
            else int(request.get("slow_calls", counts.SLOW_CALLS))
        )
        batch = int(getattr(case.cls, "number", 1)) if drain is not None else None
        try:
            found = counts.count_work(
                instance.body,
                unroll=unroll,
                calls=calls,
                batch=batch,
                drain=drain,
                cuda=request.get("cuda", True),
            )
        finally:
            self.teardown({})
        with counts.nvrtc_counted() as wrapped:
            if wrapped is None:
                return {
                    "ok": True,
                    **found,
                    "nvrtc": {},
                    "nvrtc_why": "cuda.bindings has no nvrtc module here",
                }
            again = self.setup(request)
            if "ok" not in again:
                return {
                    "error": f"{case.name}: set up again with NVRTC counted, it did not: {again}"
                }
            instance, case, drain, unroll = self.current
            try:
                nvrtc, unsteady = counts.count_nvrtc(
                    instance.body, wrapped, unroll=unroll, calls=calls, batch=batch, drain=drain
                )
            finally:
                self.teardown({})
        return {
            "ok": True,
            **found,
            "nvrtc": nvrtc,
            "nvrtc_why": counts.NVRTC_WHY,
            "unsteady": sorted(found["unsteady"] + unsteady),
        }

    def instructions(self, request):
        from cuda_bench.foundations import instructions

        case = self.cases.get(request["case"])
        if case is not None and getattr(case.cls, "clock_ns", None):
            return {"skip": f"instructions not counted: {COLD_INSTRUCTIONS}"}
        why = instructions.OTHER_THREADS.get(getattr(case, "cls", type).__name__)
        if why:
            return {"skip": f"instructions not counted: {why}"}
        answer = self.setup(request)
        if "ok" not in answer:
            return answer
        instance, case, drain, unroll = self.current
        batch = int(getattr(case.cls, "number", 1)) if drain is not None else None
        try:
            found = instructions.count(
                instance.body, unroll=unroll, batch=batch, drain=drain, label=case.name
            )
        finally:
            self.teardown({})
        return {"ok": True, **found}

    def names(self, _request):
        from cuda_bench.foundations import callgrind

        return {"ok": True, "names": callgrind.unnamed_functions()}

    def over_cpp(self, request):
        if self.cpp is None:
            return {"skip": "this suite has no bench_cpp module (C++ twins)"}
        try:
            twins = self.cpp.twins()
            cpp_calls = twins.setup(request["twin"])  # first: most cases have no twin
        except NotImplementedError as exc:
            return {"skip": str(exc) or type(exc).__name__}
        try:
            answer = self.setup(request)
            if "ok" not in answer:
                return answer
            target = int(request.get("sample_ns", 200_000))
            py = lambda calls: self.sample({"n": calls})["ns"]  # noqa: E731
            py_calls = answer["number"] or calls_for(py, target, answer["unroll"])
            cpp_calls = cpp_calls or calls_for(twins.sample, target)
            py(py_calls), twins.sample(cpp_calls)  # one turn each at this size
            groups, end = [], time.monotonic() + float(request.get("seconds", 0.1))
            while len(groups) < int(request.get("min_groups", 3)) or (
                time.monotonic() < end and len(groups) < 5000
            ):
                c1 = twins.sample(cpp_calls) / cpp_calls
                p1 = py(py_calls) / py_calls
                p2 = py(py_calls) / py_calls
                c2 = twins.sample(cpp_calls) / cpp_calls
                groups.append([round(v, 3) for v in (c1, p1, p2, c2)])
            return {"ok": True, "groups": groups, "calls": [py_calls, cpp_calls]}
        finally:
            # the reverse order of setup: what the twin changed (a pool's threshold) is put back
            # last
            try:
                self.teardown({})
            finally:
                twins.teardown()

    def teardown(self, _request):
        if self.current is None:
            return {"ok": True}
        instance, case, *_ = self.current
        self.current = None
        self._teardown(instance, case)
        return {"ok": True}

    @staticmethod
    def _teardown(instance, case):
        if hasattr(instance, "teardown"):
            instance.teardown(*case.params)


def serve(worker, requests, reply):
    handlers = {
        "hello": worker.hello,
        "setup": worker.setup,
        "sample": worker.sample,
        "teardown": worker.teardown,
        "over_cpp": worker.over_cpp,
        "count": worker.count,
        "instructions": worker.instructions,
        "names": worker.names,
    }
    for line in requests:
        request = json.loads(line)
        if request.get("op") == "quit":
            break
        try:
            answer = handlers[request["op"]](request)
        except Exception:
            answer = {"error": traceback.format_exc(limit=-3).strip()}
        reply.write(json.dumps(answer) + "\n")
        reply.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark-dir", default=None)
    parser.add_argument("--core", type=int, default=None)
    args = parser.parse_args(argv)
    reply = os.fdopen(os.dup(1), "w")  # the protocol pipe
    os.dup2(2, 1)  # anything printed goes to stderr
    sys.stdout = sys.stderr
    from cuda_bench.foundations.paths import BENCHMARKS

    try:
        worker = Worker(args.benchmark_dir or BENCHMARKS, args.core)
    except Exception:
        reply.write(
            json.dumps({"error": "the suite did not import:\n" + traceback.format_exc(limit=-3)})
            + "\n"
        )
        reply.flush()
        return 1
    serve(worker, sys.stdin, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
