"""What the benchmark suite holds: its modules, classes and cases, found as asv finds them.

Standard library only (it runs inside benchmark environments, in the paired workers). asv imports
the benchmark folder as a package named after the folder, then every module in it; a benchmark is a
method named ``time_*`` (``track_*`` ...) of a class, and a case is one combination of the class's
``params``.
The cases the paired engine can time are the ``time_*`` benchmarks whose ``setup`` binds the timed
body as ``self.body`` (every ``benchmarks._op.Op`` and ``bench_harness.Floor``), ``unroll`` calls
per run;
``queued`` classes (their calls enqueue GPU work) sample a fixed ``number`` of bodies and are
drained in between.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
import sys
from dataclasses import dataclass
from pathlib import Path

from cuda_bench.foundations.names import MODULE_PREFIX, case_name
from cuda_bench.foundations.paths import BENCHMARKS


@dataclass(frozen=True)
class Case:
    name: str  # asv's name: bench_device.SetCurrent.time_set_current('core')
    cls: type
    method: str  # time_set_current
    params: tuple  # the Python values: ('core',)


def import_suite(benchmark_dir=BENCHMARKS):
    """Import the benchmark package and its ``bench_*`` modules; [(module name, module)]."""
    path = Path(benchmark_dir).resolve()
    if str(path.parent) in sys.path:
        sys.path.remove(str(path.parent))
    sys.path.insert(0, str(path.parent))
    held = sys.modules.get(path.name)
    if held is not None and Path(next(iter(getattr(held, "__path__", [])), "")).resolve() != path:
        # another suite of the same folder name, imported before: this one, not that one
        for name in [m for m in sys.modules if m == path.name or m.startswith(f"{path.name}.")]:
            del sys.modules[name]
        importlib.invalidate_caches()
    package = importlib.import_module(path.name)
    return [
        (info.name, importlib.import_module(f"{path.name}.{info.name}"))
        for info in pkgutil.iter_modules(package.__path__)
        if info.name.startswith(MODULE_PREFIX)
    ]


def cpp_module(benchmark_dir=BENCHMARKS):
    """The suite's ``bench_cpp`` module (the C++ twins), or None for a suite without one."""
    return dict(import_suite(benchmark_dir)).get("bench_cpp")


def twin_ids(benchmark_dir=BENCHMARKS):
    """The IDs of the suite's C++ twins (``bench_cpp.OPS``), or None for a suite that does not list
    them."""
    ops = getattr(cpp_module(benchmark_dir), "OPS", None)
    return None if ops is None else set(ops)


def benchmark_classes(benchmark_dir=BENCHMARKS):
    """(module name, class) of every public class defined in a ``bench_*`` module, in file order."""
    for module_name, module in import_suite(benchmark_dir):
        for name, cls in vars(module).items():
            if (
                inspect.isclass(cls)
                and cls.__module__ == module.__name__
                and not name.startswith("_")
            ):
                yield module_name, cls


def timed_methods(cls):
    return [name for name in dir(cls) if name.startswith("time_") and callable(getattr(cls, name))]


def cases(benchmark_dir=BENCHMARKS):
    """{name: Case} for every ``time_*`` case of the suite, in file and parameter order."""
    out = {}
    for module_name, cls in benchmark_classes(benchmark_dir):
        for method in timed_methods(cls):
            params = getattr(cls, "params", None) or []
            if params and not isinstance(params[0], (list, tuple)):
                params = [params]  # asv accepts a flat list for a single parameter
            for combo in itertools.product(*params) if params else [()]:
                name = case_name(f"{module_name}.{cls.__name__}.{method}", tuple(map(repr, combo)))
                out[name] = Case(name, cls, method, tuple(combo))
    return out


# --- without a GPU ------------------------------------------------------------------------------
def needs_gpu(case):
    """Whether ``case`` (a :class:`Case`) skips on a machine without a GPU: its class's
    ``gpu_free`` (the libraries whose form runs without one, ``benchmarks._op.Op``) lacks its
    ``api``. A class that names no ``gpu_free`` (the harness's floor) needs none."""
    free = getattr(case.cls, "gpu_free", None)
    names = list(getattr(case.cls, "param_names", None) or [])
    if free is None or "api" not in names:
        return False
    return case.params[names.index("api")] not in free


def running_here(names, gpu, benchmark_dir=BENCHMARKS):
    """The cases of ``names`` that run on this machine (``gpu``: it has one): every one with a
    GPU, else those that need none (:func:`needs_gpu`). What an estimate counts."""
    if gpu:
        return list(names)
    found = cases(benchmark_dir)
    return [name for name in names if name in found and not needs_gpu(found[name])]


def counted(names, here):
    """How an estimate names the cases it counts (``here``: those of ``names`` that run on this
    machine, :func:`running_here`): "165 cases", or "31 of 165 cases (the others need a GPU)"."""
    if len(here) == len(names):
        return f"{len(names)} cases"
    return f"{len(here)} of {len(names)} cases (the others need a GPU)"


def without_gpu(consequence, benchmark_dir=BENCHMARKS):
    """What a command says first on a machine without a GPU: that there is none, what the command
    does without one (``consequence``), and how many of the suite's cases need one. Every command
    and asv's own (``cuda_bench.publish.asv_plugin``) say it in these words."""
    found = list(cases(benchmark_dir).values())
    return (
        f"no GPU on this machine: {consequence} ({sum(map(needs_gpu, found))} of the suite's "
        f"{len(found)} cases need one)"
    )
