"""Where things are: every path of the project and of what it writes, written once.

Standard library only: the build step and the paired workers import this module inside benchmark
environments, where nothing else of the project is installed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "asv.conf.json"
BENCHMARKS = ROOT / "benchmarks"
RESULTS = ROOT / "results"  # the history: real GPU runs only
# per-operation budgets: what a call may cost over C++ and over cuda.bindings
# (cuda_bench.results.budgets)
BUDGETS = ROOT / "budgets.json5"
DASHBOARD = ROOT / "dashboard"  # html/README.md, and the libraries below
# the site's own scripts and styles, which the publish stage copies beside its pages
SITE = ROOT / "cuda_bench" / "publish" / "site"
# the JavaScript and CSS libraries asv's pages load, with their licences
VENDOR = DASHBOARD / "vendor"

WORK = ROOT / ".asv"  # working state, never committed: asv environments, clones, derived config
# this checkout's cuda-python clone and asv machine name (cuda-bench init)
LOCAL_SETTINGS = WORK / "local.json"
# one virtual environment per (commit, cuda-bindings) for the paired engine
PAIRED_ENVS = WORK / "paired"
# built wheels, CUDA headers (shared by all clones)
CACHE = Path.home() / ".cache" / "cuda-python-bench"

# Next to asv's results files in results/<machine>/: line-per-record files that asv does not read
# (it loads every *.json there as a results file). cuda_bench.results.records reads and writes them.
BUILDS = "builds.jsonl"  # what each commit was built from, and how long it took
STEPS = "steps.jsonl"  # the paired comparison of each newly measured commit with the previous one
CALIBRATION = "calibration.jsonl"  # per-case thresholds from paired A/A runs on this machine
# each Python form over its C++ twin, timed in turn in one process, per commit
OVER_CPP = "over-cpp.jsonl"
# the work each call does (CUDA API calls, Python calls, allocations), per commit
COUNTS = "counts.jsonl"
# instructions per call (valgrind's callgrind), per commit
INSTRUCTIONS = "instructions.jsonl"
# results/commits.json: what the pages say of each measured commit (title, date, tags, main's
# order), recorded when it is measured, so the dashboard publishes from results/ alone
BISECTS = "bisects.jsonl"  # which commit between two made cases slower (cuda-bench bisect)
# what `import cuda.core` imports, module by module (python -X importtime), per commit
IMPORTS = "imports.jsonl"
# each package tree compiled: its compilers' CPU seconds, the jobs, the Cython and compiler versions
COMPILES = "compiles.jsonl"
COMMITS = RESULTS / "commits.json"
# set around the asv publish that cuda-bench publish runs: the project's asv plugin then leaves the
# pages to it
ASV_PAGES_ONLY = "CUDA_BENCH_ASV_PAGES_ONLY"
# set in the asv a command runs (cuda_bench.run.asvrun.asv): an interrupt there is the command's to
# say
ASV_DRIVEN = "CUDA_BENCH_DRIVES_ASV"


def no_gpu_results(env_dir):
    """Where asv's results go on a machine without a GPU: ``results-no-gpu`` beside asv's
    environments (``.asv/results-no-gpu`` for the project's configuration), never the history in
    ``results/``."""
    return (Path(env_dir).resolve().parent / "results-no-gpu").resolve()


def local_conf():
    """This command's derived copy of asv.conf.json (its --repo, --bindings ...), in WORK next to
    asv's clone of the project; one per process, so that two commands at once never read each
    other's."""
    return WORK / f"asv.conf.local-{os.getpid()}.json"


def result_files(machine_dir):
    """asv's results files of one machine directory: every ``*.json`` but ``machine.json``."""
    folder = Path(machine_dir)
    return (
        sorted(p for p in folder.glob("*.json") if p.name != "machine.json")
        if folder.is_dir()
        else []
    )


def machine_dirs(results_dir):
    """The machine directories of an asv results directory (those with a machine.json)."""
    root = Path(results_dir)
    return (
        sorted(p for p in root.iterdir() if (p / "machine.json").is_file()) if root.is_dir() else []
    )


def label(text):
    """A name safe for a file or folder: ``cuda-core-v0.3.0`` stays, ``HEAD~1`` -> ``HEAD_1``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("_") or "x"
