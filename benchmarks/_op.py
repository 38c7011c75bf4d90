"""One benchmark class per operation, one asv parameter per library.

A subclass of :class:`Op` times one operation (``EventCreate``, ``Launch``, ...) in every library that has
it. asv sees a parameter ``api`` (``core``, ``bindings``, ``cupy``; ``pathfinder`` for cuda.pathfinder's
discovery, which the others do not do), so the cuda.core, cuda.bindings and CuPy forms of one operation
share one benchmark name and one graph::

    bench_event.EventCreate.time_event_create('core')
    bench_event.EventCreate.time_event_create('bindings')
    bench_event.EventCreate.time_event_create('cupy')

A subclass declares, per api, the names it needs (``needs``) and one builder method of the same name (``core``,
``bindings``, ``cupy``, ``pathfinder``) that returns ``(callable, args)`` or ``(callable, args, kwargs)``: the
library's own function and what it is called with, bound before timing starts. The timed body, ``self.body()``, is
that call written out ``unroll`` times as straight-line code with the function and its arguments in locals
(:func:`unrolled`), and the class's ``timer`` divides the clock by ``unroll``: asv records the time of one call,
and its own loop (120-300 ns around each body on the H200) is spread over ``unroll`` calls (at 100, 1-3 ns per
call). The paired engine (``cuda_bench.run.worker``) times the same ``self.body``. Names that this version of the
library lacks, a missing GPU, or a GPU too old for the operation skip the benchmark with the reason (asv prints it
with ``--show-stderr``; ``python -m cuda_bench.run.apis`` tabulates it).

Operations that queue GPU work (launches, event records, async allocations) set ``queued = True``: each
asv sample is then a fixed ``number`` of calls and the queue is drained between samples (in teardown),
so the launch queue never fills and the numbers stay host latency, not GPU drain time.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import time

from . import _compat as compat
from ._compat import Unavailable

APIS = ("core", "bindings", "cupy", "pathfinder")
UNROLL = 100  # calls per timed body, for operations that take less than ~10 us (asv's loop: <= 3 ns per call)
QUEUED_CALLS = 100  # calls per sample of an operation that enqueues GPU work


def unrolled(fn, args=(), kwargs=None, calls=UNROLL):
    """A function of no arguments that calls ``fn(*args, **kwargs)`` ``calls`` times, written out: each
    call is the call and the loads of its locals, with no loop and no argument unpacking around it."""
    kwargs = kwargs or {}
    names = [f"a{i}" for i in range(len(args))]
    keys = {f"k_{key}": key for key in kwargs}
    params = ", ".join(["fn=fn", *(f"{n}={n}" for n in [*names, *keys])])
    call = "fn(" + ", ".join([*names, *(f"{key}={local}" for local, key in keys.items())]) + ")"
    namespace = {"fn": fn, **dict(zip(names, args)), **{local: kwargs[key] for local, key in keys.items()}}
    exec(f"def body({params}):\n" + f"    {call}\n" * calls, namespace)
    return namespace["body"]


def per_call_timer(calls):
    """asv's ``timer`` for a body of ``calls`` calls: the clock divided by ``calls``, so that asv's
    seconds per timed call are seconds per operation (asv picks ``number`` from the wall clock)."""
    if calls == 1:
        return staticmethod(time.perf_counter)

    def timer(clock=time.perf_counter, calls=calls):
        return clock() / calls

    return staticmethod(timer)


@functools.cache
def _shared_source():
    """The source every operation's version hashes besides its own classes: the shared setup and
    teardown and the unrolled body (read once per process, not once per class)."""
    return "".join(map(inspect.getsource, [Op.setup, Op._setup, Op.teardown, unrolled]))


class Op:
    #: per api: the names this form needs, e.g. {"core": ("core.Device.create_event",)}
    needs: dict = {}
    #: extra asv parameters, e.g. {"args": ["none", "16 ptr"]}
    cases: dict = {}
    #: apis whose form runs without a GPU (compilation, enum construction, ...)
    gpu_free: tuple = ()
    #: this operation enqueues GPU work: fixed batch per sample, queue drained between samples
    queued = False
    #: the timed call synchronises with the GPU (stated in the dashboard via the docstring)
    synchronizes = False
    #: calls per timed body; 1 for operations slow enough (> ~10 us) that asv's loop does not matter
    unroll = UNROLL
    #: where the forms of this operation do different work (on purpose, or because a library does), and why:
    #: marked in the overview. A class that only gains or rewords this pins its ``version`` to keep its history.
    differs = ""

    timeout = 120
    #: one asv process per case: asv starts it under ``setarch -R`` pinned to one core (cuda_bench.run.asvrun), so a
    #: second process has the same address-space layout and adds only a CUDA start-up; per-process variance is
    #: the paired engine's to measure (cuda_bench.compare.paired)
    processes = 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "version" not in vars(cls):
            # asv hashes only the timed method and setup() (here, shared) to tell whether a benchmark
            # changed; the builders are the benchmark, so hash the class and the shared setup instead.
            # Pin `version = "..."` in a class to keep its history across a cosmetic edit.
            classes = [k for k in cls.__mro__ if issubclass(k, Op) and k is not Op]
            source = "".join(map(inspect.getsource, classes)) + _shared_source()
            source += f"unroll={cls.unroll} queued_calls={QUEUED_CALLS if cls.queued else 0}"
            cls.version = hashlib.sha256(source.encode()).hexdigest()[:16]
        apis = [api for api in APIS if api in cls.needs]
        cls.params = [apis, *cls.cases.values()]
        cls.param_names = ["api", *cls.cases]
        cls.timer = per_call_timer(cls.unroll)
        if cls.queued:
            # 0.2.5-style asv: setup/teardown run between samples, not inside one; warm-up is done in
            # setup (below) so asv's own warm-up, which would not drain, is switched off.
            cls.number = QUEUED_CALLS // cls.unroll
            cls.warmup_time = 0
            cls.repeat = (10, 40, 20.0)

    # asv hooks -------------------------------------------------------------------------------------
    def setup(self, api, *case):
        self._cleanups = []
        self.drain = None
        try:
            self._setup(api, *case)
        except BaseException:
            self.teardown(api, *case)  # what setup changed is undone (a paired worker runs many cases)
            raise

    def _setup(self, api, *case):
        compat.resolve_all(self.needs[api])
        if api not in self.gpu_free:
            compat.require_gpu()
        self.fn, self.args, *kwargs = getattr(self, api)(*case)
        self.kwargs = kwargs[0] if kwargs else {}
        self.body = unrolled(self.fn, self.args, self.kwargs, self.unroll)
        if self.queued and self.drain is None:
            raise RuntimeError(f"{type(self).__name__}.{api} queues GPU work but set no drain")
        try:
            for _ in range(max(1, 10 // self.unroll) if self.queued else 1):  # warm-up; asv's is off for queued ops
                self.body()
        except Exception as exc:
            if api in self.gpu_free and not compat.has_gpu():
                raise Unavailable(f"{compat.describe(api)} needs a CUDA driver for this ({exc!r})") from exc
            raise
        if self.drain is not None:
            self.drain()

    def teardown(self, api, *case):
        if self.drain is not None:
            self.drain()
        while self._cleanups:
            fn, args = self._cleanups.pop()
            fn(*args)

    # for builders ----------------------------------------------------------------------------------
    def defer(self, fn, *args):
        """Run ``fn(*args)`` in teardown (reverse order): what setup creates, teardown frees."""
        self._cleanups.append((fn, args))
