"""``cuda-bench compare`` on a probe suite, as a process to interrupt: ``python tests/stop_probe.py OUT``.

The command line is the real one (cuda_bench.cli.main, its signal handling, the paired engine, its pair drivers
and worker processes); only what needs a cuda-python checkout is stood in for: both sides' environments are
this Python, the suite is a few pure-Python spins, and the repository is not cloned. Every process it starts
inherits ``CUDA_BENCH_STOP_MARK``, by which a test finds any that outlive it.
"""

import sys
from pathlib import Path

SUITE = '''
import os
from benchmarks._op import unrolled


def spin(n):
    x = 0
    for i in range(n):
        x += i
    return x


def make(name):
    class Spin:
        params = [["py"]]
        param_names = ["api"]
        unroll = 10

        def setup(self, api):
            self.body = unrolled(spin, (int(os.environ.get("SPIN", "300")),), None, self.unroll)

    Spin.__name__ = Spin.__qualname__ = name
    setattr(Spin, f"time_{name.lower()}", lambda self, api: self.body())
    return Spin


for i in range(8):
    globals()[f"Spin{i}"] = make(f"Spin{i}")
'''


def main(out):
    out = Path(out)
    suite = out / "probebench"
    suite.mkdir(parents=True, exist_ok=True)
    (suite / "__init__.py").write_text("")
    (suite / "bench_probe.py").write_text(SUITE)

    from cuda_bench import cli
    from cuda_bench.commands import common
    from cuda_bench.commands import compare as command
    from cuda_bench.compare import gate

    def settings_of(args):
        settings = common.settings_of(args)
        settings.benchmark_dir = suite
        return settings

    command.settings_of = settings_of
    command.paired_context = lambda args: ({"matrix": {"env": {"CUDA_BENCH_BINDINGS": ["13.3.1"]}, "req": {}}}, "repo")
    gate.environments = lambda repo, revs, *a, **kw: {rev: {"commit": rev * 40, "python": sys.executable}
                                                          for rev in revs}
    return cli.main(["compare", "a", "b", "--pairs", "8", "--seconds", "0.3", "--jobs", "2",
                     "--out", str(out / "compare"), "--machine", "probe"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
