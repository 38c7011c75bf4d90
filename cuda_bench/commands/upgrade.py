"""``cuda-bench upgrade``: the records in results/ brought to the current schema, as ``asv update``
does for asv's."""

from __future__ import annotations

from pathlib import Path

from cuda_bench.commands.common import log
from cuda_bench.foundations.paths import RESULTS, machine_dirs
from cuda_bench.foundations.status import OK
from cuda_bench.results import records


def add(sub):
    p = sub.add_parser(
        "upgrade",
        description="rewrite every record file of results/<machine>/ (builds, steps, "
        "calibration, over-C++ runs, counts) in the current schema; records already current stay "
        "as they are",
    )
    p.add_argument(
        "--results", type=Path, default=RESULTS, help="the results folder (default results/)"
    )


def main(args, argv):
    for folder in machine_dirs(args.results):
        done = records.upgrade(folder)
        log(
            f"{folder}: "
            + (
                ", ".join(f"{name} {count} upgraded" for name, count in done.items())
                or "no records"
            )
        )
    return OK
