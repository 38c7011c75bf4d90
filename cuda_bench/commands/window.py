"""``cuda-bench window REV ...``: commits measured in one pass (``cuda_bench.compare.window``):
every commit timed once, each adjacent pair judged as a paired step, each commit's asv numbers from
the same samples, then its work and instructions per call counted; all of it kept in the history
(with a GPU), or, with ``--out``, in a folder alone (a proof, an A/A)."""

from __future__ import annotations

import json
from pathlib import Path

from cuda_bench.commands.common import (
    asv_options,
    block_option,
    command_line,
    cupti_option,
    log,
    no_counts_option,
    no_instructions_option,
    paired_options,
    settings_of,
    this_machine,
)
from cuda_bench.compare import keep
from cuda_bench.foundations import machine
from cuda_bench.foundations.paths import no_gpu_results
from cuda_bench.run import asvrun


def add(sub):
    p = sub.add_parser(
        "window",
        description="measure commits in one pass: for each process group one worker per build on "
        "one core, the builds timed in turn (a shuffled order and its reverse, each round), each "
        "adjacent pair judged from those rounds as a paired step is, each commit's asv numbers "
        "from the same samples; then each commit's work and instructions per call counted. REVs "
        "are commits, tags, branches or ranges (A..B: main's first-parent commits after A up to "
        "B), oldest first. With a GPU they go into the history: results/<machine>/steps.jsonl, "
        "each commit's asv results file, builds.jsonl, counts.jsonl, instructions.jsonl, "
        "commits.json; the measured commits "
        "of main just before and after them are added, so that the new commits are paired with "
        "their neighbours. A commit listed twice is measured twice (an A/A): with --out only. "
        "Exit status: 1 when a step flagged a regression, 2 when something could not be measured "
        "or recorded.",
    )
    asv_options(p)
    paired_options(p)
    p.add_argument("revs", nargs="+", metavar="REV", help="commits or ranges, oldest first")
    block_option(p)
    p.add_argument(
        "--out",
        metavar="DIR",
        help="keep what it measured in DIR (window.json, each step's summary) and nothing in the "
        "history",
    )
    p.add_argument(
        "--no-edges",
        action="store_true",
        help="measure the REVs alone, without the measured commits of main around them",
    )
    no_counts_option(p)
    no_instructions_option(p)
    cupti_option(p)


def commits_of(repo, revs):
    """The commits ``revs`` name, oldest first: a range ``A..B`` as main's first-parent commits
    after A up to B."""
    out = []
    for rev in revs:
        if ".." in rev:
            out += reversed(asvrun.check_revisions(repo, rev))
        else:
            out.append(asvrun.resolve_one(repo, rev))
    return out


def main(args, argv):
    settings = settings_of(args)
    command = command_line(argv)
    name, info = this_machine(args)
    gpu = machine.has_gpu(info)
    config = asvrun.derived_conf(args.repo, args.bindings, args.results_dir, args.system_site)
    conf = json.loads(config.read_text())
    repo = asvrun.local_repo(conf)
    results_dir = Path(conf["results_dir"]) if gpu else no_gpu_results(conf["env_dir"])
    commits = commits_of(repo, args.revs)
    if args.out is None:
        if len(set(commits)) < len(commits):
            raise asvrun.RunError(
                "a commit listed twice is an A/A, which the history does not keep: --out DIR "
                "keeps it"
            )
        status, _ = keep.into_history(
            repo,
            commits,
            conf=conf,
            config=config,
            machine_name=name,
            info=info,
            results_dir=results_dir,
            settings=settings,
            command=command,
            line=asvrun.first_parent(repo),
            bench=args.bench,
            block=args.block,
            counts=gpu and not args.no_counts,
            cupti=args.cupti,
            edges=not args.no_edges,
            instructions=gpu and not args.no_instructions,
            progress=log,
        )
        return status
    if len(commits) < 2:
        raise asvrun.RunError(
            "--out keeps what a window compares: it needs two commits or more (a range such as "
            "HEAD~5..HEAD, or a commit twice for an A/A)"
        )
    log(f"window: {len(commits)} commits, oldest first: " + " ".join(c[:9] for c in commits))
    out = Path(args.out)
    kept = keep.into_folder(
        conf,
        repo,
        commits,
        out,
        calibrated=Path(results_dir) / name,
        settings=settings,
        bench=args.bench,
        block=args.block,
        command=command,
        info=info,
        progress=log,
    )
    for line in keep.step_lines(kept.found):
        log(line)
    log(
        f"window: kept in {out} (window.json, steps/, each block in blocks/), not in the history; "
        f"measured in {kept.seconds:g} s after {kept.build_seconds:g} s of environments"
    )
    return keep.status_of(kept.found)
