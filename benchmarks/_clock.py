"""The clock asv reads around every sample: wall time, or wall time at the machine's full speed.

On the lent H200 VM a core runs, for seconds at a time, at full speed or at about half speed, and every
call slows by the same factor: the harness floor goes 80 -> 160 ns while ``Device.set_current`` goes
320 -> 640 ns, in the same process, without any time stolen from it (``scripts/noise_probe.py
--timeline``; docs/measurement.md). Wall time then measures the machine's state as much as the call.

With ``CUDA_BENCH_REFERENCE_NS`` set (``scripts/bench.py --clock reference`` sets it from asv.conf.json's
``reference_ns`` for the machine), every benchmark's ``timer`` is a :class:`ReferenceClock`: right before
and right after each sample it times a reference body -- the floor's body, ``self.fn(*self.args)`` around
``int()`` -- and counts the sample's wall time scaled by ``reference_ns / reference now``. A sample
taken at half speed then reads what it would have taken at full speed, and ``reference_ns`` (the
reference's cost at this machine's full speed, measured once) keeps the numbers in nanoseconds. The
reference runs outside the timed interval. Unset, the timer is asv's own (``timeit.default_timer``).

Benchmarks timed with the reference clock carry a different asv ``version`` (``VERSION_TAG``), so asv
never compares or graphs them against wall-clock results of the same benchmark.
"""

from __future__ import annotations

import os
import statistics
import timeit

ENV = "CUDA_BENCH_REFERENCE_NS"


class _Body:
    """The floor's timed body (bench_harness.Floor): ``self.fn(*self.args)`` around ``int()``."""

    def __init__(self, fn=int):
        self.fn, self.args = fn, ()
        self.func = self.time  # where asv_runner keeps the benchmark's bound method

    def time(self, api):
        self.fn(*self.args)

    def as_asv_calls_it(self, *param):
        """The callable asv_runner times for a parameterised benchmark: ``func()`` -> ``self.func(*param)``."""

        def func():
            self.func(*param)

        return func


class ReferenceClock:
    """A monotonic clock read in pairs (start, end of a sample, as ``timeit`` and asv do): each pair
    advances it by the wall time between them times ``reference_ns`` over the reference's current cost,
    measured just before the start and just after the end."""

    BLOCKS, CALLS = 5, 100  # median of 5 blocks of 100 reference calls: ~40-80 us, an interrupt is ignored

    def __init__(self, reference_ns):
        if not reference_ns > 0:
            raise ValueError(f"{ENV} must be a positive number of nanoseconds, not {reference_ns!r}")
        self.reference_s = reference_ns * 1e-9
        self._call = _Body().as_asv_calls_it("noop")
        self._loop = range(self.CALLS)
        self._now = timeit.default_timer
        self._elapsed = 0.0
        self._start = None

    def reference(self):
        """Seconds per reference call, now."""
        now, call, loop, blocks = self._now, self._call, self._loop, []
        for _ in range(self.BLOCKS):
            t0 = now()
            for _ in loop:
                call()
            blocks.append(now() - t0)
        return statistics.median(blocks) / self.CALLS

    def __call__(self):
        if self._start is None:  # a sample starts: the reference first, then the clock
            before = self.reference()
            self._start = (self._now(), before)
            return self._elapsed
        end = self._now()  # the sample ends: the clock first, then the reference
        start, before = self._start
        after = self.reference()
        self._start = None
        self._elapsed += (end - start) * self.reference_s / ((before + after) / 2)
        return self._elapsed


def reference_ns():
    """``CUDA_BENCH_REFERENCE_NS`` as a float, or None when unset."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{ENV} must be a number of nanoseconds, not {value!r}") from None


def timer():
    """The ``timer`` for a benchmark class: a fresh ReferenceClock when the variable is set, else asv's."""
    ns = reference_ns()
    return ReferenceClock(ns) if ns is not None else timeit.default_timer


#: appended to a benchmark's asv version when timed with the reference clock
VERSION_TAG = "+reference-clock" if reference_ns() is not None else ""
