"""``cuda-bench prebuild REV ...``: several commits into the wheel cache at once, before a run."""

from __future__ import annotations

import os
from pathlib import Path

from cuda_bench.build import environment
from cuda_bench.commands.common import at_least, bindings_option, repo_option
from cuda_bench.foundations.status import INCOMPLETE, OK
from cuda_bench.run import asvrun


def add(sub):
    p = sub.add_parser(
        "prebuild",
        description="build REVs into the wheel cache, N at a time (each in its own "
        "checkout and venv); asv's build step and the paired engine then find them, when they "
        "take the same cuda-bindings (--bindings, default as theirs).",
    )
    bindings_option(
        p,
        "as run's --bindings (default from asv.conf.json, as run and compare take it; "
        "CUDA_BENCH_BINDINGS where set)",
    )
    p.add_argument(
        "revs", nargs="+", metavar="REV", help="what `asv run` accepts: SHAs, tags, branches"
    )
    repo_option(p, "a local clone of cuda-python (default: the one `cuda-bench init` set)")
    p.add_argument(
        "--parallel",
        type=at_least(1),
        default=4,
        help="builds at a time, the cores shared (default %(default)s)",
    )
    p.add_argument("--logs", metavar="DIR", help="keep each build's log here")


def main(args, argv):
    repo = args.repo or asvrun.local_settings().get("repo")
    if not repo:
        raise asvrun.RunError(
            "prebuild needs a local clone of cuda-python: --repo PATH (or `cuda-bench init --repo`)"
        )
    for rev in args.revs:  # every name checked before anything is built
        asvrun.resolve_one(Path(repo).resolve(), rev)
    bindings = (
        args.bindings
        or os.environ.get("CUDA_BENCH_BINDINGS")
        or asvrun.bindings_of(asvrun.load_conf())
    )  # what run and compare take unless told
    made = environment.prebuild(Path(repo).resolve(), args.revs, args.parallel, args.logs, bindings)
    return OK if all(r.get("ok") for r in made) else INCOMPLETE
