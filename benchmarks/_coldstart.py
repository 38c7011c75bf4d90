"""Cold start: what a fresh process pays before its first call, net of what an empty one pays.

A cold-start case's body starts two fresh processes of one program, one after the other: the statement's
(``python -c "import cuda.core"``) and the empty one's (``python -c pass``: the same interpreter, the same
environment, nothing imported), each timed from the start of the process to its end, and adds the first's time
less the second's to the **net clock** (:func:`net_clock_ns`). What the interpreter itself costs to start and to
stop cancels; what the statement adds, its imports, the driver's load and its first context, and what those
cost again at exit, stays. The two runs are milliseconds apart on one core, so the core's speed cancels in the
difference as it does in an ABBA group.

A first context runs **alone on the machine**: its two processes run while it holds a lock (:func:`alone`, ``flock`` on
:data:`GPU_LOCK`) that every first context of every worker takes. The driver queues first contexts across processes:
on an H100, cuda.bindings' first context took 318 ms net one process at a time and 2,547 ms with fifteen at once
(×8.0, docs/evidence/cold-starts-h100), so a window's samples, fifteen cores at once, timed the queue. What a user's
process meets is the first context on an idle GPU: the lock keeps other first contexts away, and the paired engine
and the window time the first contexts after every other case, so that no other case's GPU work runs beside them
(``cuda_bench.compare.paired.in_groups``).

The case times itself on that clock, under asv and in the paired engine alike: the class's ``timer`` (asv's) and
``clock_ns`` (``cuda_bench.run.worker``'s) both read it, so a sample is the net time of the bodies it ran, one body
a sample (``number = 1``).

asv's ``timeraw_`` benchmarks also time a statement in a fresh interpreter, but inside it (``timeit`` around the
statement, after ``timeit`` itself was imported): they leave out the cost at exit, and their body is code text run
by asv_runner, not a callable the paired worker can time. These cases are ``time_`` benchmarks on the net clock
instead: one body, timed the same way by both.

Nothing here does GPU work in the process that imports it: the statements run in the children.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import _compat as compat
from ._op import Op

#: nanoseconds of cold starts measured in this process, net of the empty process: the cases' clock
_NET = [0]

#: the stderr lines a failed start keeps in its error
TAIL = 6


def net_clock_ns():
    """The cold-start cases' clock: advances by each body's net time (``cuda_bench.run.worker``'s ``clock_ns``)."""
    return _NET[0]


def net_clock():
    """The same clock in seconds: asv's ``timer``."""
    return _NET[0] * 1e-9


class StartFailed(RuntimeError):
    """A fresh process of a cold-start case exited with an error."""


def child_env():
    """The environment the fresh processes run in: this one's, less the ``PYTHONPATH`` entries that hold the
    benchmark tool (``cuda_bench``): a user's process does not search them, and every import would."""
    env = dict(os.environ)
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and not (Path(p) / "cuda_bench").is_dir()]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        env.pop("PYTHONPATH", None)
    return env


def wall_ns(argv, env=None):
    """A fresh process of ``argv``, from its start to its end, in nanoseconds; :class:`StartFailed` with the
    tail of its stderr when it exits with an error."""
    start = time.perf_counter_ns()
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env=env)
    elapsed = time.perf_counter_ns() - start
    if done.returncode:
        tail = "\n".join(done.stderr.decode(errors="replace").strip().splitlines()[-TAIL:])
        raise StartFailed(f"{' '.join(argv[:2])} ... exited {done.returncode}: {tail}")
    return elapsed


#: the lock a first context holds while its two processes run (:func:`alone`): one file for every worker of every
#: command on the machine (a fixed path: each cuda-bench command runs with a ``TMPDIR`` of its own)
GPU_LOCK = Path(os.environ.get("CUDA_BENCH_GPU_LOCK") or "/tmp/cuda-bench-first-context.lock")


@contextlib.contextmanager
def alone():
    """While the block runs, no other first context on the machine does (:data:`GPU_LOCK`, held). The wait for the
    lock is not timed."""
    with open(GPU_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def net_sample(argv, empty, env=None, run=wall_ns, first_context=False):
    """One cold start: ``argv``'s process, then ``empty``'s (the same program doing nothing); the first's time
    less the second's is added to the net clock and returned. ``run(argv, env)`` times one process. A first
    context runs both processes :func:`alone` on the machine."""
    with alone() if first_context else contextlib.nullcontext():
        full = run(argv, env)
        net = full - run(empty, env)
    _NET[0] += net
    return net


def python_sample(statement, first_context=False):
    """A body of no arguments: one cold start of this interpreter running ``statement``, against ``pass``
    (``first_context``: both :func:`alone` on the machine)."""
    argv, empty, env = [sys.executable, "-c", statement], [sys.executable, "-c", "pass"], child_env()

    def body(argv=argv, empty=empty, env=env):
        net_sample(argv, empty, env, first_context=first_context)

    return body


class ColdStart(Op):
    """An operation whose form is a fresh interpreter running a statement: the builder of each api returns that
    statement (``Op``'s other builders return a call). One body per sample, on the net clock; no warm-up in
    setup (each body starts afresh: the paired engine's warm-up turn, and asv's warm-up, are the warm-up of the
    file system's caches; a first context takes no warm-up turn, and its first pair's first samples warm them)."""

    unroll = 1
    timeout = 300

    def __init_subclass__(cls, **kwargs):
        pinned = "version" in vars(cls)
        super().__init_subclass__(**kwargs)
        if not pinned:  # how a body starts and times its processes is part of every case's version too
            sampler = "".join(map(inspect.getsource, [child_env, wall_ns, alone, net_sample, python_sample]))
            cls.version = hashlib.sha256((cls.version + sampler).encode()).hexdigest()[:16]
        cls.timer = staticmethod(net_clock)
        cls.clock_ns = staticmethod(net_clock_ns)
        cls.number = 1  # one cold start a sample (and asv's repeat: 3 to 10 samples, at most 20 s)
        cls.repeat = (3, 10, 20.0)
        cls.warmup_time = 0

    def _setup(self, api, *case):
        compat.resolve_all(self.needs[api])
        gpu = api not in self.gpu_free
        if gpu:
            compat.require_gpu()
        self.statement = getattr(self, api)(*case)
        self.body = python_sample(self.statement, first_context=gpu)


# --- the C++ twin's program ---------------------------------------------------------------------------------------
CPP_SOURCE = Path(__file__).with_name("cpp") / "coldstart.cpp"
CPP_CACHE = Path(os.environ.get("CUDA_BENCH_CACHE", Path.home() / ".cache" / "cuda-python-bench")) / "coldstart"


def cpp_compiler():
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        found = name and shutil.which(name)
        if found:
            return found
    return None


def cpp_program():
    """``cpp/coldstart.cpp`` compiled with this machine's C++ compiler (cached by the source's and the compiler's
    hash): the C++ twin's program. It loads the driver itself (``dlopen``), so it builds without CUDA."""
    compiler = cpp_compiler()
    if compiler is None:
        raise compat.Unavailable("no C++ compiler here (CXX, c++, g++, clang++) to build the C++ cold start")
    key = hashlib.sha256(CPP_SOURCE.read_bytes() + os.path.realpath(compiler).encode()).hexdigest()[:16]
    target = CPP_CACHE / f"coldstart-{key}"
    if not target.exists():
        CPP_CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=CPP_CACHE) as work:
            out = Path(work) / target.name
            proc = subprocess.run([compiler, "-O2", "-o", str(out), str(CPP_SOURCE), "-ldl"],
                                  capture_output=True, text=True)
            if proc.returncode:
                raise RuntimeError(f"building {CPP_SOURCE.name} failed:\n{proc.stderr[-3000:]}")
            os.replace(out, target)  # atomic: workers building it at once agree
    return target
