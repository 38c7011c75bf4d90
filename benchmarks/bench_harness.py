"""The harness floor: what asv's timing loop costs around a call that does nothing.

Every operation's timed body is ``self.fn(*self.args)`` inside asv's parameterised loop. This benchmark has
the same shape with ``fn = int`` (a C builtin returning the cached 0), so ``measured - floor`` is the cost of
the call itself. Each run records its own floor. The paired engine runs it too, as a control: both builds
time the same builtin, so its ratio must read 1.000.
"""


class Floor:
    params = [["noop"]]
    param_names = ["api"]

    def setup(self, api):
        self.fn, self.args = int, ()

    def time_noop(self, api):
        self.fn(*self.args)
