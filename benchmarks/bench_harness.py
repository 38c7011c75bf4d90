"""The harness floor: what timing costs per call around a call that does nothing.

Every operation's timed body is ``self.body()``: the operation's call written out ``unroll`` times
(``benchmarks._op.unrolled``) inside asv's parameterised loop, with a timer that divides by ``unroll``.
This benchmark has the same shape with ``fn = gc.isenabled`` (a C function of no arguments that
returns a cached bool: about the cheapest call Python can make), so it reads the harness's cost per call,
the no-op call included, and ``measured - floor`` is what the operation itself adds. Each run records its
own floor. The paired engine runs it too, as a control: both builds time the same builtin, so its ratio
must read 1.000.
"""

import gc

from ._op import UNROLL, per_call_timer, unrolled


class Floor:
    version = f"floor-unroll-{UNROLL}"  # asv hashes setup(), which reads the unroll only through the class
    processes = 1  # as every Op (benchmarks/_op.py)
    params = [["noop"]]
    param_names = ["api"]
    unroll = UNROLL
    timer = per_call_timer(UNROLL)

    def setup(self, api):
        self.body = unrolled(gc.isenabled, (), None, self.unroll)

    def time_noop(self, api):
        self.body()
