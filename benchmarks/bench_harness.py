"""The harness floor: what asv's timing loop costs around a call that does nothing.

Every operation's timed body is ``self.fn(*self.args)`` inside asv's parameterised loop. This benchmark has
the same shape with ``fn = int`` (a C builtin returning the cached 0), so ``measured - floor`` is the cost of
the call itself. Each run records its own floor.

Under the reference clock (benchmarks/_clock.py) the reference is this body, so the floor then reads a
constant near ``reference_ns`` whatever the machine's state (1.3x it on the H200: asv's own loop around
the call): a check that the clock is on rather than a measurement.
"""

from . import _clock


class Floor:
    params = [["noop"]]
    param_names = ["api"]
    timer = _clock.timer()
    if _clock.VERSION_TAG:  # else asv's own version (a hash of the code), as before the clock existed
        version = "floor" + _clock.VERSION_TAG

    def setup(self, api):
        self.fn, self.args = int, ()

    def time_noop(self, api):
        self.fn(*self.args)
