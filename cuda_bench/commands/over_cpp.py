"""``cuda-bench over-cpp COMMIT``: each Python form against its C++ twin, sample by sample in one
process."""

from __future__ import annotations

from cuda_bench.commands.common import (
    asv_options,
    command_line,
    keep_out_of_the_history,
    paired_context,
    paired_options,
    settings_of,
    this_machine,
)
from cuda_bench.compare import gate, overcpp, paired
from cuda_bench.foundations.paths import RESULTS, WORK, label


def add(sub):
    p = sub.add_parser(
        "over-cpp",
        description="in one build, each Python form and its C++ twin timed alternately, sample by "
        "sample, in one process; several fresh processes give each case's interval. Appends to "
        "results/<machine>/over-cpp.jsonl (the overview's 'over C++'). Exit status 2 when a case "
        "could not be measured, or only without some processes.",
    )
    p.add_argument("commit", help="commit, tag or branch")
    asv_options(p, results_dir=False)
    paired_options(p, paired.Settings.over_cpp())
    p.add_argument(
        "--no-write", action="store_true", help="do not append to results/<machine>/over-cpp.jsonl"
    )
    p.add_argument(
        "--keep-groups",
        action="store_true",
        help="also write every ABBA group the medians come "
        "from to OUT/groups.json.gz (about 20 MB gzipped for the whole suite; -b for fewer cases)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="over-cpp.json, over-cpp.md and the worker logs (default .asv/over-cpp/COMMIT)",
    )


def main(args, argv):
    settings = settings_of(args)
    # said before anything is built or recorded
    if not overcpp.items_of(args.bench, settings.benchmark_dir):
        raise gate.CompareError(
            f"nothing to time over C++: {list(args.bench)} match no case with a C++ twin"
        )
    name, info = this_machine(args)
    keep_out_of_the_history(args, info, "the over-C++ record is")
    conf, repo = paired_context(args)
    status, _ = overcpp.measure_and_record(
        repo,
        args.commit,
        conf=conf,
        machine_name=name,
        info=info,
        results_dir=RESULTS,
        settings=settings,
        bench=args.bench,
        command=command_line(argv),
        write=not args.no_write,
        out=args.out or WORK / "over-cpp" / label(args.commit),
        keep_groups=args.keep_groups,
    )
    return status
