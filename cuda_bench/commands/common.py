"""What several commands share: their options, the checks on them, and how a command names itself in
the records it writes."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

from cuda_bench.compare import paired
from cuda_bench.foundations import machine, suite
from cuda_bench.foundations.paths import RESULTS
from cuda_bench.run import asvrun


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


# --- options several commands take, each declared once (asv's commands/common_args.py is the
# model): a command passes its own help only where the option means more there
def repo_option(parser, help=None):
    parser.add_argument(
        "--repo",
        metavar="PATH",
        help=help
        or "a local clone or fork of cuda-python instead of the one `cuda-bench init` set (or "
        "the configured GitHub URL); scripts/shallow_clone.sh makes a small one",
    )


def bindings_option(parser, help=None):
    parser.add_argument(
        "--bindings",
        metavar="VERSION",
        help=help
        or "'source' (the default, from asv.conf.json) builds cuda_bindings from each commit, "
        "cached by its tree; a version (13.3.1) takes that cuda-bindings wheel and builds only "
        "cuda_pathfinder + cuda_core; 'auto' takes 13.3.1 where the commit's cuda_core has a cu13 "
        "extra, else 12.9.10",
    )


def machine_option(parser, help=None):
    parser.add_argument(
        "--machine",
        metavar="NAME",
        help=help
        or "asv machine name (default: the one `cuda-bench init` recorded, else after the GPU, "
        "e.g. nvidia-h200; cpu-<host> without one)",
    )


def bench_option(parser):
    parser.add_argument(
        "--bench",
        "-b",
        action="append",
        default=[],
        metavar="REGEX",
        type=regex,
        help="only the cases whose name matches (repeatable, as asv's -b)",
    )


def no_counts_option(parser, help=None):
    parser.add_argument(
        "--no-counts",
        action="store_true",
        help=help
        or "skip the counting pass (the work each call does: `cuda-bench counts`; made only on a "
        "machine with a GPU)",
    )


def no_instructions_option(parser):
    """--no-instructions, for the commands that make an instruction pass (counts, compare, run,
    window)."""
    parser.add_argument(
        "--no-instructions",
        action="store_true",
        help="skip the instruction pass (instructions per call, counted under valgrind's "
        "callgrind: `cuda-bench counts --help`; made where valgrind is found, "
        "$CUDA_BENCH_VALGRIND or PATH)",
    )


def block_option(parser):
    from cuda_bench.compare import window

    parser.add_argument(
        "--block",
        type=at_least(2),
        default=window.BLOCK,
        help="builds timed at once per core (a worker process each); a longer window is measured "
        "in blocks of this many that share their edge commit (default %(default)s)",
    )


def asv_options(parser, results_dir=True):
    group = parser.add_argument_group(
        "what to build and where (asv.conf.json is never edited: "
        "a derived copy, .asv/asv.conf.local-PID.json, lives as long as the command)"
    )
    repo_option(group)
    bindings_option(group)
    group.add_argument(
        "--system-site",
        metavar="DIR",
        help="reuse CuPy and numpy from this site-packages "
        "instead of installing them (GPU boxes without network)",
    )
    machine_option(group)
    if results_dir:
        group.add_argument(
            "--results-dir",
            metavar="DIR",
            help="asv's results there instead of results/ (on a "
            "machine without a GPU they go to .asv/results-no-gpu, never into the history)",
        )


def paired_options(parser, defaults=None):
    group = parser.add_argument_group(
        "the paired engine (docs/method.md says how these were chosen)"
    )
    defaults = defaults or paired.Settings()
    group.add_argument(
        "--pairs",
        type=at_least(1),
        default=defaults.pairs,
        help="process pairs; a case's 95%% interval is over their ratios (default %(default)s)",
    )
    group.add_argument(
        "--layouts",
        choices=["random", "fixed"],
        default=defaults.layouts,
        help="random: ASLR on, each worker process its own memory layout; fixed: ASLR off, one "
        "layout per build for the run (default %(default)s)",
    )
    group.add_argument(
        "--seconds",
        type=positive,
        default=defaults.seconds,
        help="seconds of interleaved samples per case and process pair (default %(default)s)",
    )
    group.add_argument(
        "--jobs",
        type=at_least(0),
        default=0,
        help="process pairs at a time, each on its own core (default: every core but the first)",
    )
    bench_option(group)


def cupti_option(parser):
    """--cupti, for the commands that make a counting pass (counts, compare, run, plan)."""
    parser.add_argument(
        "--cupti",
        action="append",
        default=[],
        metavar="WHEEL",
        type=Path,
        help="a wheel (or a folder of wheels) to count CUDA calls with: cupti-python and the "
        "nvidia-cuda-cupti that carries libcupti (e.g. `pip download --no-deps "
        "cupti-python==13.0.1 nvidia-cuda-cupti==13.0.*`); installed with --no-deps, from these "
        "files only, into a folder of their own per environment that only the counting workers see "
        "(the timed environments stay as built, and no newer cuda-bindings comes with them). "
        "Repeatable",
    )


def regex(text):
    """A --bench or --tags value: a regular expression, or one line saying why not."""
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a regular expression ({exc}); a case name's "
            "parentheses need a backslash: \\("
        ) from None
    return text


def at_least(low):
    def number(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value

    return number


def positive(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{value} is not above 0")
    return value


def key_value(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def command_line(argv):
    """How a record names the command that made it."""
    return "cuda-bench " + " ".join(map(shlex.quote, argv))


def settings_of(args):
    return paired.Settings(
        pairs=args.pairs, seconds=args.seconds, jobs=args.jobs, layouts=args.layouts
    )


#: what a command that times cases does on a machine without a GPU, unless it says more
SKIPS = "the cases that need one skip, and nothing is written to results/ (GPU runs only)"
#: what asv's runs do there (``cuda_bench.publish.asv_plugin``)
OUTSIDE = "asv's results go to .asv/results-no-gpu, never results/ (the history of GPU runs)"
#: the commands that build nothing without a GPU: every case they time needs one to mean anything
NEEDS_GPU = ("window", "bisect")


def without_gpu(consequence):
    """The GPU fields of this machine (``machine.gpu_info``); without a GPU, the command's first
    line says so (``suite.without_gpu``), with what it does there (``consequence``)."""
    gpu = machine.gpu_info()
    if not gpu:
        log(suite.without_gpu(consequence))
    return gpu


def this_machine(args, without=SKIPS):
    """(machine name, its record): ``--machine``, else the name ``cuda-bench init`` recorded, else
    after the GPU. Without a GPU the command's first line says so and what it does there
    (``without``); a command of :data:`NEEDS_GPU` stops there, before anything is built
    (RunError: exit 3), and says how to fill the wheel cache for a GPU machine instead."""
    if args.command not in NEEDS_GPU:
        gpu = without_gpu(without)
    elif not (gpu := machine.gpu_info()):
        raise asvrun.RunError(
            suite.without_gpu(
                f"{args.command} times cases on a GPU and builds nothing without one; `cuda-bench "
                "prebuild REV ...` builds commits into the wheel cache here for a GPU machine"
            )
        )
    return machine.record(args.machine or asvrun.local_settings().get("machine"), gpu)


def paired_context(args):
    """(derived config as a dict, local repo) for the paired engine."""
    conf = json.loads(
        asvrun.derived_conf(args.repo, args.bindings, None, args.system_site).read_text()
    )
    return conf, asvrun.local_repo(conf)


def keep_out_of_the_history(args, info, what):
    """Without a GPU, what aa and over-cpp measure is not written to results/ (real GPU runs
    only)."""
    if not machine.has_gpu(info) and not args.no_write:
        log(f"no GPU here: {what} not written to results/, which holds GPU runs only")
        args.no_write = True


def steps_hint(args, results_dir, *flags):
    """The `cuda-bench steps` command that finds the same steps again: ``flags``, then this
    command's repository, machine name, system site and results folder where they were given."""
    given = [
        (option, getattr(args, option[2:].replace("-", "_"), None))
        for option in ("--repo", "--machine", "--system-site")
    ]
    here = Path(results_dir).resolve() == RESULTS.resolve()
    given += [] if here else [("--results-dir", results_dir)]
    return shlex.join(
        [
            "cuda-bench",
            "steps",
            *flags,
            *[str(x) for option, value in given if value for x in (option, value)],
        ]
    )
