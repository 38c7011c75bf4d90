"""One benchmark process of the paired engine: one environment (one build of cuda-python), one core.

    python -m cuda_bench.worker [--benchmark-dir DIR] [--core N]

``cuda_bench.paired`` starts workers two at a time, one per build, pinned to the same core, with
address-space randomisation off and a fixed hash seed, and asks them for samples in turn. A worker sets up
the suite's own benchmark classes (their ``setup``/``teardown``, the operation they bind as ``self.fn``,
``self.args``, the ``drain`` of queued GPU work): one definition of each operation, asv's and this one.

Requests are JSON lines on stdin; each gets one JSON line back on the protocol pipe (the process's original
stdout: file descriptor 1 is pointed at stderr, so a library that prints cannot corrupt the protocol)::

    {"op": "hello"}                -> {"ok": true, "pid", "core", "aslr_off", "versions": {...}}
    {"op": "setup", "case": NAME}  -> {"ok": true, "number": N or null} | {"skip": reason} | {"error": text}
    {"op": "sample", "n": N}       -> {"ns": time of N calls}; then the drain, untimed (queued operations)
    {"op": "teardown"}             -> {"ok": true} | {"error": text}
    {"op": "quit"}                 -> (exits)

A sample is N calls of the bound operation, ``fn(*args)``, ten to a loop turn so the loop costs a tenth of
a bare ``for`` loop per call; the garbage collector is off while a sample runs, as in ``timeit``.
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

UNROLL = 10
_BODY = (
    "def run(n, fn, args):\n"
    f"    for _ in range(n // {UNROLL}):\n" + "        fn(*args)\n" * UNROLL
    + f"    for _ in range(n % {UNROLL}):\n        fn(*args)\n"
)
_namespace = {}
exec(_BODY, _namespace)
run_calls = _namespace["run"]  # run_calls(n, fn, args): the timed body


def versions():
    found = {}
    for dist in ("cuda-core", "cuda-bindings", "cuda-pathfinder", "cupy-cuda13x", "cupy-cuda12x", "numpy"):
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    found["python"] = sys.version.split()[0]
    return found


def aslr_off():
    try:
        with open("/proc/self/personality") as f:
            return bool(int(f.read(), 16) & 0x0040000)  # ADDR_NO_RANDOMIZE
    except OSError:
        return False


class Worker:
    def __init__(self, benchmark_dir, core=None):
        from cuda_bench import suite

        if core is not None:
            os.sched_setaffinity(0, {core})
        self.core = core
        self.cases = suite.cases(benchmark_dir)
        self.current = None  # (instance, case, drain)

    def hello(self, _request):
        return {"ok": True, "pid": os.getpid(), "core": self.core, "aslr_off": aslr_off(), "versions": versions(),
                "cases": len(self.cases)}

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
        if not hasattr(instance, "fn") or not hasattr(instance, "args"):
            self._teardown(instance, case)
            return {"error": f"{case.name}: setup binds no self.fn / self.args, so there is no call to time"}
        queued = bool(getattr(case.cls, "queued", False))
        drain = getattr(instance, "drain", None) if queued else None
        self.current = (instance, case, drain)
        return {"ok": True, "number": getattr(case.cls, "number", None) if queued else None}

    def sample(self, request):
        instance, _case, drain = self.current
        n, fn, args = int(request["n"]), instance.fn, instance.args
        enabled = gc.isenabled()
        gc.disable()
        try:
            start = time.perf_counter_ns()
            run_calls(n, fn, args)
            elapsed = time.perf_counter_ns() - start
        finally:
            if enabled:
                gc.enable()
        if drain is not None:
            drain()
        return {"ns": elapsed}

    def teardown(self, _request):
        if self.current is None:
            return {"ok": True}
        instance, case, _ = self.current
        self.current = None
        self._teardown(instance, case)
        return {"ok": True}

    @staticmethod
    def _teardown(instance, case):
        if hasattr(instance, "teardown"):
            instance.teardown(*case.params)


def serve(worker, requests, reply):
    handlers = {"hello": worker.hello, "setup": worker.setup, "sample": worker.sample, "teardown": worker.teardown}
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
    from cuda_bench.layout import BENCHMARKS

    try:
        worker = Worker(args.benchmark_dir or BENCHMARKS, args.core)
    except Exception:
        reply.write(json.dumps({"error": "the suite did not import:\n" + traceback.format_exc(limit=-3)}) + "\n")
        reply.flush()
        return 1
    serve(worker, sys.stdin, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
