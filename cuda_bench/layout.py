"""Where things are and what they are called: every path and naming rule of the project, written once.

Standard library only: the build step and the paired workers import this module inside benchmark
environments, where nothing else of the project is installed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "asv.conf.json"
BENCHMARKS = ROOT / "benchmarks"
RESULTS = ROOT / "results"  # the history: real GPU runs only
DASHBOARD = ROOT / "dashboard"  # the dashboard's pinned npm libraries and html/README.md

WORK = ROOT / ".asv"  # working state, never committed: asv environments, clones, derived config
NO_GPU_RESULTS = WORK / "results-no-gpu"  # where a run on a machine without a GPU goes by default
LOCAL_SETTINGS = WORK / "local.json"  # this checkout's cuda-python clone and asv machine name (cuda-bench init)
PAIRED_ENVS = WORK / "paired"  # one virtual environment per (commit, cuda-bindings) for the paired engine
CACHE = Path.home() / ".cache" / "cuda-python-bench"  # built wheels, CUDA headers (shared by all clones)

# Next to asv's results files in results/<machine>/: line-per-record files that asv does not read (it loads
# every *.json there as a results file).
BUILDS = "builds.jsonl"  # what each commit was built from, and how long it took
STEPS = "steps.jsonl"  # the paired comparison of each newly measured commit with the previous one
CALIBRATION = "calibration.jsonl"  # per-case thresholds from paired A/A runs on this machine
OVERHEAD = "overhead.jsonl"  # each Python form over its C++ twin, timed in turn in one process, per commit

# Benchmarks that do not depend on cuda-python: shown, never counted as a regression of a commit.
CPP = "bench_cpp.Cpp.track_latency"  # the C++ twins (a shared library, timing itself)
FLOOR = "bench_harness.Floor.time_noop"  # the timing harness around a call that does nothing
CONTROLS = ("bench_cpp.", "bench_harness.")
MODULE_PREFIX = "bench_"  # a suite module: bench_<area>.py
# The library a form times is its first parameter; the distributions whose code its timed calls run, named as
# the workers record their versions (cuda_bench.worker): cuda.core's calls go through cuda.bindings; CuPy
# comes as one of two distributions.
TIMED_CODE = {"core": ("cuda-core", "cuda-bindings"), "bindings": ("cuda-bindings",),
              "cupy": ("cupy-cuda13x", "cupy-cuda12x"), "pathfinder": ("cuda-pathfinder",)}


def no_gpu_results(env_dir):
    """Where asv's results go on a machine without a GPU: ``results-no-gpu`` beside asv's environments
    (``.asv/results-no-gpu`` for the project's configuration), never the history in ``results/``."""
    return (Path(env_dir).resolve().parent / "results-no-gpu").resolve()


def local_conf():
    """This command's derived copy of asv.conf.json (its --repo, --bindings ...), in WORK next to asv's clone of
    the project; one per process, so that two commands at once never read each other's."""
    return WORK / f"asv.conf.local-{os.getpid()}.json"


def result_files(machine_dir):
    """asv's results files of one machine directory: every ``*.json`` but ``machine.json``."""
    folder = Path(machine_dir)
    return sorted(p for p in folder.glob("*.json") if p.name != "machine.json") if folder.is_dir() else []


def machine_dirs(results_dir):
    """The machine directories of an asv results directory (those with a machine.json)."""
    root = Path(results_dir)
    return sorted(p for p in root.iterdir() if (p / "machine.json").is_file()) if root.is_dir() else []


def case_name(benchmark, combo=()):
    """asv's name of one case: ``bench_device.SetCurrent.time_set_current('core')``. ``combo`` holds the
    parameter values as asv stores them (``repr`` strings: ``"'core'"``)."""
    return f"{benchmark}({', '.join(combo)})" if combo else benchmark


def short_name(benchmark):
    """How the overview names an operation: ``bench_device.SetCurrent.time_set_current`` -> ``device.SetCurrent``."""
    module, cls = benchmark.split(".")[:2]
    return f"{module.removeprefix(MODULE_PREFIX)}.{cls}"


def split_case(name):
    """``"bench_x.C.time_y('core', '16 ptr')"`` -> ``("bench_x.C.time_y", ("'core'", "'16 ptr'"))``."""
    match = re.fullmatch(r"([\w.]+)(?:\((.*)\))?", name)
    if not match:
        raise ValueError(f"not a case name: {name!r}")
    benchmark, inner = match.groups()
    return benchmark, tuple(re.findall(r"'[^']*'|[^,\s][^,]*", inner or ""))


def library_of(name):
    """The library a case times, its first parameter (``'bindings'``); None for a case that times none."""
    combo = split_case(name)[1]
    api = combo[0].strip("'") if combo else None
    return api if api in TIMED_CODE else None


def is_control(name):
    """C++ twins and the harness floor: independent of cuda-python, so never a regression of a commit."""
    return name.startswith(CONTROLS)


def cpp_id(benchmark, combo):
    """The C++ twin of a Python case: ``bench_launch.Launch.time_launch`` + ``("'core'", "'16 ptr'")`` ->
    ``"launch[16 ptr]"``: the method name without ``time_``, the non-api parameters in brackets.
    ``LaunchPrepacked`` and ``LaunchVoidPointer`` share ``launch``'s twins (C++ always passes packed addresses)."""
    op = benchmark.rsplit(".", 1)[1][len("time_"):]
    op = {"launch_prepacked": "launch", "launch_void_pointer": "launch"}.get(op, op)
    case = [c.strip("'") for c in combo[1:]]
    return f"{op}[{' '.join(case)}]" if case else op


def label(text):
    """A name safe for a file or folder: ``cuda-core-v0.3.0`` stays, ``HEAD~1`` -> ``HEAD_1``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("_") or "x"


def is_release_tag(tag):
    """A cuda-core release, ``cuda-core-v0.3.2`` (not ``...rc1``): the ladder's rungs and the overview's
    "previous release" both go by it (scripts/shallow_clone.sh keeps the same tags)."""
    return re.fullmatch(r"cuda-core-v\d+\.\d+\.\d+", tag) is not None
