"""``cuda-bench plan``: what this machine's history lacks, most valuable first, with the minutes
each part should take; ``--run --budget MINUTES``: as much of it as fits, each part by the command
that makes it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from cuda_bench.build import carry
from cuda_bench.commands.common import (
    asv_options,
    at_least,
    command_line,
    cupti_option,
    log,
    no_counts_option,
    positive,
    this_machine,
)
from cuda_bench.compare import plan
from cuda_bench.foundations import machine
from cuda_bench.foundations.paths import WORK
from cuda_bench.foundations.status import OK, worst
from cuda_bench.results import history
from cuda_bench.run import asvrun


def add(sub):
    p = sub.add_parser(
        "plan",
        description="what this machine's history lacks, most valuable first: main's head measured "
        "and paired, the gaps between measured commits, main's newest commits not yet measured, "
        "their work per call, then the releases; each with the GPU machine time it should take "
        "(from this machine's own records, else defaults) and the command that makes it. With "
        "--run, runs them in that order while each fits in --budget, planning again after each; "
        "the record (.asv/plan/, or --out) keeps each part's estimate beside the time it took. "
        "Exit status: the worst of the commands it ran.",
    )
    asv_options(p)
    p.add_argument(
        "--window",
        type=at_least(1),
        default=20,
        help="main's newest commits to keep measured (default %(default)s)",
    )
    p.add_argument(
        "--run", action="store_true", help="run the plan, most valuable first, within --budget"
    )
    p.add_argument(
        "--budget",
        type=positive,
        default=25.0,
        metavar="MINUTES",
        help="minutes of GPU machine time --run may spend (default %(default)s)",
    )
    p.add_argument(
        "--out", metavar="FILE", help="the record of a --run (default .asv/plan/plan-DATE.json)"
    )
    p.add_argument(
        "--carry-limit",
        type=positive,
        metavar="MIB",
        help="also say how the plan's prebuilt wheels go to a GPU machine without network in "
        "batches of at most MIB each (what one call carries beside the tree, the clone and the "
        "wheel folders), and which batch each part needs",
    )
    p.add_argument(
        "--call-limit",
        type=at_least(60),
        metavar="SECONDS",
        help="with --run: the seconds one call of the GPU machine may run (600 on a lent box), "
        "counted from CUDA_BENCH_CALL_START (epoch seconds; scripts/offline_run.sh sets it) or "
        "else from this command's start: every part ends 30 s inside it, a window cut to its "
        "newest commits that fit, and the part the next call starts with is said",
    )
    no_counts_option(
        p,
        "a plan without the counting pass: no counts part, and --no-counts to each window it runs",
    )
    cupti_option(p)


def shared(args, command):
    """The options of this command that the plan's command ``command`` takes too."""
    out = []
    for option in ("--repo", "--machine", "--system-site"):
        value = getattr(args, option[2:].replace("-", "_"), None)
        if value:
            out += [option, str(Path(value).resolve()) if option != "--machine" else value]
    if args.results_dir and command in ("run", "ladder", "steps"):
        out += ["--results-dir", str(Path(args.results_dir).resolve())]
    if args.bindings and command in ("run", "counts", "steps"):
        out += ["--bindings", args.bindings]
    if command in ("run", "ladder", "counts"):
        out += [x for wheel in args.cupti for x in ("--cupti", str(Path(wheel).resolve()))]
    if command in ("run", "ladder"):
        out += ["--no-publish", "--no-over-cpp"]
    if args.no_counts and command in ("run", "ladder", "window"):
        out += ["--no-counts"]
    if command in ("run", "ladder", "window"):  # the plan's estimates hold no instruction pass
        out += ["--no-instructions"]
    return out


def main(args, argv):
    name, info = this_machine(args)
    config = asvrun.derived_conf(args.repo, args.bindings, args.results_dir, args.system_site)
    conf = json.loads(config.read_text())
    gpu = machine.has_gpu(info)
    results_dir = Path(conf["results_dir"])  # read only, unless --run, which needs a GPU
    site = None if args.system_site or gpu else history.system_site(results_dir, name)
    if site:  # read on another machine: in the environment the history was measured in
        conf.setdefault("matrix", {}).setdefault("env", {})["CUDA_BENCH_SYSTEM_SITE"] = [site]
        log(f"plan: the history of {name} as measured there, with the system site {site}")
    planner = plan.Planner(
        asvrun.local_repo(conf),
        results_dir,
        name,
        conf,
        window=args.window,
        counts=not args.no_counts,
    )
    items = planner.items()
    log(
        f"plan for {results_dir / name} (main's {args.window} newest commits with cuda-bindings "
        f"{planner.bindings}; the releases with auto): {len(items)} part(s)"
    )
    for line in plan.table(items, planner.cost):
        print(line, flush=True)
    if args.carry_limit:
        limit = int(args.carry_limit * 2**20)
        found = carry.batches(items, planner.repo, planner.bindings, limit, python=planner.python)
        for line in carry.batch_lines(found, limit):
            print(line, flush=True)
    if not args.run:
        return OK
    if not gpu:
        raise asvrun.RunError(
            "plan --run measures into the history, which holds GPU runs only: this machine has no "
            "GPU (the plan above is what a GPU machine would run)"
        )
    statuses = []

    def run_one(item):
        common = shared(args, item.args[0])
        # the item's own (a release step's auto) wins
        if "--bindings" in item.args and "--bindings" in common:
            at = common.index("--bindings")
            del common[at : at + 2]
        status = plan.run_command(item.args, common)
        statuses.append(status)
        return status

    started = os.environ.get("CUDA_BENCH_CALL_START")
    record = plan.execute(
        planner,
        args.budget * 60,
        run_one,
        progress=log,
        call_limit=args.call_limit,
        spent=max(0.0, time.time() - float(started)) if started else 0.0,
    )
    record |= {
        "command": command_line(argv),
        "machine": name,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    out = Path(args.out or WORK / "plan" / f"plan-{time.strftime('%Y%m%dT%H%M%S')}.json")
    plan.write(out, record)
    log(
        f"plan: {len(record['done'])} part(s) run in {record['seconds']:.0f} s of a "
        f"{args.budget:g} min budget, {len(record['left'])} left; estimate against time taken in "
        f"{out}"
    )
    for done in record["done"]:
        log(
            f"  [{done['kind']}] {done['what']}: estimated {done['estimate']:.0f} s, took "
            f"{done['seconds']:.0f} s, exit status {done['status']}"
        )
    return worst(statuses)
