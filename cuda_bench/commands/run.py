"""``cuda-bench run [RANGE]``: the main job; ``cuda-bench ladder``: every cuda-core release, then
main's head.

With a GPU, the commits are measured in one pass (``cuda_bench.compare.window``): each built from
source through the wheel cache and timed once, each paired with the commit before it (with the
measured commits around them), asv's results files written from the same samples, and each counted
(``cuda_bench.compare.countpass``); then the newest is timed against C++
(``cuda_bench.compare.overcpp``) and the dashboard is published. ``--asv-pass``, and every run
without a GPU, times with asv's own run instead (without a GPU, outside the history), then pairs
each newly measured commit with the previous measured one (``cuda_bench.compare.steps``). The
revisions are checked before anything is built.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

from cuda_bench.commands.common import (
    OUTSIDE,
    asv_options,
    block_option,
    command_line,
    cupti_option,
    log,
    no_counts_option,
    no_instructions_option,
    paired_options,
    regex,
    settings_of,
    steps_hint,
    this_machine,
)
from cuda_bench.compare import countpass, instrpass, keep, overcpp, paired, steps
from cuda_bench.foundations import machine
from cuda_bench.foundations.paths import COMMITS, RESULTS, no_gpu_results
from cuda_bench.foundations.status import INCOMPLETE, OK, worst
from cuda_bench.publish import dashboard
from cuda_bench.results import history
from cuda_bench.run import asvrun


def add(sub):
    for name, text in (
        ("run", "asv run, then paired steps, work counts and over-C++ (with a GPU), then publish"),
        ("ladder", "asv run over every cuda-core release tag and main's head, then as run"),
    ):
        p = sub.add_parser(
            name,
            description=f"{text}. Everything after the options goes to `asv run` unchanged "
            "(a range such as HEAD~20..HEAD, --quick ...); with none, main's newest commit.",
        )
        asv_options(p)
        p.add_argument(
            "--cpu-affinity",
            default="auto",
            metavar="LIST",
            help="pin asv's benchmark processes "
            "('auto': the last core on machines with 4 or more; 'none'; or a list such as 7)",
        )
        p.add_argument("--no-publish", action="store_true", help="leave html/ as it is")
        p.add_argument(
            "--asv-pass",
            action="store_true",
            help="with a GPU, time the commits with asv's own run, then pair each newly measured "
            "commit with a paired step, instead of the one pass of `cuda-bench window` (each "
            "commit timed once, its steps and its asv numbers from the same samples)",
        )
        block_option(p)
        p.add_argument(
            "--no-steps", action="store_true", help="skip the paired steps after asv run"
        )
        p.add_argument(
            "--no-over-cpp",
            action="store_true",
            help="skip the paired over-C++ measurement of the "
            "newest measured commit after asv run (made only on a machine with a GPU)",
        )
        no_counts_option(p)
        no_instructions_option(p)
        cupti_option(p)
        if name == "ladder":
            p.add_argument(
                "--tags",
                metavar="REGEX",
                type=regex,
                help="only ladder names (tags, 'main') that match",
            )
            p.add_argument(
                "--new",
                action="store_true",
                help="only the releases newer than the newest one this "
                "machine measured in the ladder's environment (with --tags: of the matching ones), "
                "each then paired with the release before it (the nightly job); nothing to do when "
                "there is none, or before a first full ladder",
            )
        paired_options(p)


def ladder_commits(args, conf, name):
    """(the ladder's [(tag, commit)] to run, the newest release measured before, for --new; None
    otherwise), or (None, None) when there is nothing to run."""
    commits = asvrun.release_ladder(conf["repo"], (conf.get("branches") or ["main"])[0])
    if args.tags:
        commits = [(tag, sha) for tag, sha in commits if re.search(args.tags, tag)]
    newest = None
    if args.new:
        where = f"{Path(conf['results_dir']) / name} (cuda-bindings {asvrun.bindings_of(conf)})"
        newest, commits = history.newer_releases(
            commits, history.measured_in(conf["results_dir"], name, conf)
        )
        if newest is None:
            log(
                f"ladder --new: no cuda-core release measured yet in {where}: nothing to pair a "
                "new one with; `cuda-bench ladder` makes the ladder first (every release built and "
                "run)"
            )
            return None, None
        if not commits:
            log(
                f"ladder --new: no cuda-core release newer than {newest[0]}, the newest measured "
                f"in {where}: nothing to run"
            )
            return None, None
        log(f"ladder --new: newer than {newest[0]}, the newest measured in {where}")
    if not commits:
        raise asvrun.RunError(
            f"{conf['repo']} has no cuda-core-v* tags"
            + (f" matching {args.tags!r}" if args.tags else "")
        )
    return commits, newest


@dataclass
class Run:
    """What one ``run`` or ``ladder`` works with: its options, the derived configuration, the clone,
    this machine, where its results go."""

    args: argparse.Namespace
    command: str  # as the records name it
    conf: dict
    config: Path  # the derived asv.conf.json
    repo: Path
    name: str
    info: dict
    gpu: bool
    results_dir: Path
    settings: paired.Settings


def main(args, rest, argv):
    name, info = this_machine(args, OUTSIDE)
    gpu = machine.has_gpu(info)
    config = asvrun.derived_conf(
        args.repo,
        args.bindings or ("auto" if args.command == "ladder" else None),
        args.results_dir,
        args.system_site,
    )
    conf = json.loads(config.read_text())
    # without a GPU asv writes beside its environments (cuda_bench.publish.asv_plugin), never into
    # the history
    results_dir = Path(conf["results_dir"]) if gpu else no_gpu_results(conf["env_dir"])
    run = Run(
        args,
        command_line(argv),
        conf,
        config,
        asvrun.local_repo(conf),
        name,
        info,
        gpu,
        results_dir,
        settings_of(args),
    )
    commits = newest = None
    if args.command == "ladder":
        commits, newest = ladder_commits(args, conf, name)
        if commits is None:
            return OK
        hashfile = asvrun.temporary_file("ladder-", "".join(sha + "\n" for _, sha in commits))
        log("ladder " + ", ".join(tag for tag, _ in commits))
        rest = [f"HASHFILE:{hashfile}", *rest]
    # before anything is built
    measuring = asvrun.check_revisions(run.repo, asvrun.range_of(rest))
    if measuring is not None:
        log(f"{len(measuring)} commit(s) to measure, newest {measuring[0][:9]}")
    if gpu and not args.asv_pass and measuring is not None:
        return in_one_pass(run, measuring)
    return with_asv_pass(run, rest, commits, newest)


def in_one_pass(run, measuring):
    """``run`` and ``ladder`` on a GPU: the commits measured in one pass into the history
    (``keep.into_history``: every commit timed once, each paired with the one before it, asv's
    numbers and the work per call from the same pass), then the newest timed against C++ and the
    dashboard published."""
    args = run.args
    line = (
        [
            sha
            for _, sha in asvrun.release_ladder(run.repo, (run.conf.get("branches") or ["main"])[0])
        ]
        if args.command == "ladder"
        else asvrun.first_parent(run.repo)
    )
    order = {sha: i for i, sha in enumerate(line)}
    commits = sorted(dict.fromkeys(measuring), key=lambda c: order.get(c, -1))
    status, _ = keep.into_history(
        run.repo,
        commits,
        conf=run.conf,
        config=run.config,
        machine_name=run.name,
        info=run.info,
        results_dir=run.results_dir,
        settings=run.settings,
        command=run.command,
        line=line,
        bench=args.bench,
        block=args.block,
        counts=not args.no_counts,
        cupti=args.cupti,
        instructions=not args.no_instructions,
        progress=log,
    )
    return finish(run, [status], commits[-1])


def with_asv_pass(run, rest, commits, newest):
    """``run`` with ``--asv-pass``, and every run without a GPU: asv times the commits, then each
    newly measured commit is paired with the previous measured one and counted (with a GPU), then
    the newest is timed against C++ and the dashboard published."""
    args, name, results_dir = run.args, run.name, run.results_dir
    before = history.snapshot(results_dir, name)
    with asvrun.build_progress() as progress_env:
        # --show-stderr: skip reasons and failures reach the console
        # asv's -b, as the paired steps'
        bench = [arg for regex_ in args.bench for arg in ("--bench", regex_)]
        asv_status = asvrun.asv(
            "run",
            "--machine",
            name,
            "--show-stderr",
            *bench,
            *rest,
            config=run.config,
            timed=True,
            affinity=args.cpu_affinity,
            env=progress_env,
        )
    try:
        # beside asv's results: outside the history without a GPU
        asvrun.record_builds(name, run.config, results_dir)
    except OSError as exc:  # what asv measured is still paired and published
        log(f"what each commit was built from not recorded: {exc}")
    measured = history.newly_measured(results_dir, name, before)
    if run.gpu and measured:
        try:
            # beside the results
            asvrun.record_commits(run.repo, measured, Path(results_dir) / COMMITS.name)
        except OSError as exc:
            log(f"what the pages say of the measured commits not recorded: {exc}")
    statuses = [INCOMPLETE if asv_status else OK]
    # asv exits non-zero when one benchmark failed: what it did measure is still paired
    if asv_status:
        log(f"asv run exited {asv_status}; pairing and publishing what it measured")
    if not args.no_steps:
        statuses.append(steps_after(run, before, commits, newest))
    if not args.no_counts and run.gpu and measured:
        statuses.append(
            countpass.record_commits(
                run.repo,
                measured,
                conf=run.conf,
                machine_name=name,
                info=run.info,
                results_dir=results_dir,
                cupti=args.cupti,
                command=run.command,
                progress=log,
            )
        )
    if not args.no_instructions and run.gpu and measured:
        statuses.append(
            instrpass.record_commits(
                run.repo,
                measured,
                conf=run.conf,
                machine_name=name,
                info=run.info,
                results_dir=results_dir,
                command=run.command,
                progress=log,
            )
        )
    return finish(run, statuses, history.newest_measured(results_dir, name, before))


def steps_after(run, before, commits, newest):
    """The paired step of each commit asv newly measured with the one before it (``ladder --new``:
    release after release, not by commit date)."""
    args, name, results_dir = run.args, run.name, run.results_dir
    if args.command == "ladder" and args.new:
        pairs = history.release_chain(
            newest, commits, history.measured_in(results_dir, name, run.conf)
        )
    else:
        pairs = history.new_steps(results_dir, name, before)
    if not pairs:
        log("steps: no newly measured commit has a measured predecessor on this machine")
        return OK
    bindings = asvrun.bindings_of(run.conf)
    return steps.make(
        [steps.Step(b, h, bindings, regexes=args.bench) for b, h in pairs],
        conf=run.conf,
        machine_name=name,
        info=run.info,
        results_dir=results_dir,
        settings=run.settings,
        command=run.command,
        later=steps_hint(args, results_dir, "--bindings", bindings),
    )


def finish(run, statuses, newest_commit):
    """The newest measured commit timed against C++ (with a GPU), then the dashboard published:
    the exit status of all of it."""
    args = run.args
    if not args.no_over_cpp and run.gpu and newest_commit:
        statuses.append(
            overcpp.measure_and_record(
                run.repo,
                newest_commit,
                conf=run.conf,
                machine_name=run.name,
                info=run.info,
                results_dir=run.results_dir,
                settings=paired.Settings.over_cpp(seconds=args.seconds, jobs=args.jobs),
                bench=args.bench,
                command=run.command,
            )[0]
        )
    if not args.no_publish:
        if not run.gpu:
            log(
                "publish: html/ from the history (results/); this run's results stay in "
                f"{run.results_dir} (asv's tables above)"
            )
        # the history this run added to (results/, or --results-dir); a machine without a GPU adds
        # to none
        dashboard.publish(
            asvrun.derived_conf(
                args.repo, None, run.results_dir if run.gpu else RESULTS, args.system_site
            )
        )
    return worst(statuses)
