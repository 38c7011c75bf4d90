"""What things are called: the suite's case names, the Python <-> C++ twin IDs, the controls and the
release tags, written once.

Standard library only (it runs inside benchmark environments, in the paired workers).
"""

from __future__ import annotations

import re

# Benchmarks that do not depend on cuda-python: shown, never counted as a regression of a commit.
CPP = "bench_cpp.Cpp.track_latency"  # the C++ twins (a shared library, timing itself)
HARNESS = "bench_harness.Floor.time_noop"  # the timing harness around a call that does nothing
HARNESS_CASE = f"{HARNESS}('noop')"
CONTROLS = ("bench_cpp.", "bench_harness.")
# Cold starts: each sample starts fresh processes (benchmarks/_coldstart.py), so the paired engine
# times them in fewer process pairs than the other cases (paired.Settings.cold_pairs)
COLD_START = ("bench_coldstart.", "bench_cpp.FirstContext.")
# First contexts: cold starts that make a CUDA context, one at a time on the machine (a lock in
# benchmarks/_coldstart.py) and after every other case (compare.paired.in_groups), so the engines
# time them in the fewest process pairs of a 95 % interval and one to spare, one group each
# (settings.Settings.for_case)
FIRST_CONTEXT = ("bench_coldstart.FirstContext.", "bench_cpp.FirstContext.")
MODULE_PREFIX = "bench_"  # a suite module: bench_<area>.py
# The library a form times is its first parameter; the distributions whose code its timed calls run,
# named as the workers record their versions (cuda_bench.run.worker): cuda.core's calls go through
# cuda.bindings; CuPy comes as one of two distributions.
TIMED_CODE = {
    "core": ("cuda-core", "cuda-bindings"),
    "bindings": ("cuda-bindings",),
    "cupy": ("cupy-cuda13x", "cupy-cuda12x"),
    "pathfinder": ("cuda-pathfinder",),
}


def case_name(benchmark, combo=()):
    """asv's name of one case: ``bench_device.SetCurrent.time_set_current('core')``. ``combo`` holds
    the parameter values as asv stores them (``repr`` strings: ``"'core'"``)."""
    return f"{benchmark}({', '.join(combo)})" if combo else benchmark


def short_name(benchmark):
    """How the pages name an operation: ``bench_device.SetCurrent.time_set_current`` ->
    ``device.SetCurrent``."""
    module, cls = benchmark.split(".")[:2]
    return f"{module.removeprefix(MODULE_PREFIX)}.{cls}"


def split_case(name):
    """``"bench_x.C.time_y('core', '16 ptr')"`` -> ``("bench_x.C.time_y", ("'core'", "'16
    ptr'"))``."""
    match = re.fullmatch(r"([\w.]+)(?:\((.*)\))?", name)
    if not match:
        raise ValueError(f"not a case name: {name!r}")
    benchmark, inner = match.groups()
    return benchmark, tuple(re.findall(r"'[^']*'|[^,\s][^,]*", inner or ""))


def library_of(name):
    """The library a case times, its first parameter (``'bindings'``); None for a case that times
    none."""
    combo = split_case(name)[1]
    api = combo[0].strip("'") if combo else None
    return api if api in TIMED_CODE else None


def is_control(name):
    """C++ twins and the harness floor: independent of cuda-python, so never a regression of a
    commit."""
    return name.startswith(CONTROLS)


#: a cold start's C++ twin: a program started fresh for each sample (benchmarks/bench_cpp.py)
COLD_TWINS = {
    "bench_coldstart.FirstContext.time_first_context": "bench_cpp.FirstContext.time_first_context"
}


def is_cold_start(name):
    """A case whose samples are fresh processes (an import, the driver's load, the first
    context)."""
    return name.startswith(COLD_START)


def is_first_context(name):
    """A cold start that makes a CUDA context: its samples run one at a time on the machine."""
    return name.startswith(FIRST_CONTEXT)


def cpp_id(benchmark, combo):
    """The C++ twin of a Python case: ``bench_launch.Launch.time_launch`` + ``("'core'", "'16
    ptr'")`` -> ``"launch[16 ptr]"``: the method name without ``time_``, the non-api parameters in
    brackets. ``LaunchPrepacked`` and ``LaunchVoidPointer`` share ``launch``'s twins (C++ always
    passes packed addresses)."""
    op = benchmark.rsplit(".", 1)[1][len("time_") :]
    op = {"launch_prepacked": "launch", "launch_void_pointer": "launch"}.get(op, op)
    case = [c.strip("'") for c in combo[1:]]
    return f"{op}[{' '.join(case)}]" if case else op


def is_release_tag(tag):
    """A cuda-core release, ``cuda-core-v0.3.2`` (not ``...rc1``): the ladder's rungs and the pages'
    "newest release" both go by it (scripts/shallow_clone.sh keeps the same tags)."""
    return re.fullmatch(r"cuda-core-v\d+\.\d+\.\d+", tag) is not None


def release_version(tag):
    """``cuda-core-v0.3.2`` -> ``(0, 3, 2)``: the order of releases."""
    return tuple(int(x) for x in tag.rsplit("v", 1)[1].split("."))
