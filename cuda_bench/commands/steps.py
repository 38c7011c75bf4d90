"""``cuda-bench steps``: the paired steps the history lacks; ``--recheck``: the flags not yet
confirmed, measured again on this machine start."""

from __future__ import annotations

import json
from pathlib import Path

from cuda_bench.commands.common import (
    asv_options,
    command_line,
    log,
    paired_options,
    settings_of,
    steps_hint,
    this_machine,
)
from cuda_bench.compare import steps
from cuda_bench.foundations import machine
from cuda_bench.foundations.paths import no_gpu_results
from cuda_bench.foundations.status import OK
from cuda_bench.run import asvrun


def add(sub):
    p = sub.add_parser(
        "steps",
        description="pair each measured commit of the history that has no paired step "
        "with the measured commit before it (a step that could not be measured, a run with "
        "--no-steps), in the environments built with --bindings; appends to "
        "results/<machine>/steps.jsonl. Exit status 2 when a step could not be measured.",
    )
    asv_options(p)
    paired_options(p)
    p.add_argument(
        "--list",
        action="store_true",
        help="only list the missing steps (with --recheck: the regressions to measure again)",
    )
    p.add_argument(
        "--pair",
        nargs=2,
        action="append",
        default=[],
        metavar=("BASE", "HEAD"),
        help="only this missing step (repeatable): two measured commits, the previous and the next",
    )
    p.add_argument(
        "--recheck",
        action="store_true",
        help="instead, measure again the cases the history's steps flagged but that are not yet "
        "confirmed (on one machine start only, or only with one fixed layout per build): a second "
        "start's flag, one of the two with a layout per process, confirms a regression; a "
        "measurement without one does not reproduce it (docs/method.md)",
    )


def main(args, argv):
    settings = settings_of(args)
    name, info = this_machine(args)
    config = asvrun.derived_conf(args.repo, args.bindings, args.results_dir, args.system_site)
    conf = json.loads(config.read_text())
    results_dir = (
        Path(conf["results_dir"]) if machine.has_gpu(info) else no_gpu_results(conf["env_dir"])
    )
    if args.recheck:
        return recheck(args, name, info, results_dir, conf, command_line(argv))
    bindings = asvrun.bindings_of(conf)
    todo, other = steps.missing(results_dir, name, bindings)
    if args.pair:
        repo = asvrun.local_repo(conf)
        wanted = [tuple(asvrun.resolve_one(repo, rev) for rev in pair) for pair in args.pair]
        unknown = [
            f"{b[:9]} -> {h[:9]}"
            for b, h in wanted
            if (b, h) not in {(s.base, s.head) for s in todo}
        ]
        if unknown:
            raise asvrun.RunError(
                f"not a missing step of {results_dir / name} (cuda-bindings {bindings}): "
                + ", ".join(unknown)
                + "; `cuda-bench steps --list` names them"
            )
        todo = [s for s in todo if (s.base, s.head) in wanted]
    log(
        f"steps: {len(todo)} missing in {results_dir / name} (cuda-bindings {bindings})"
        + (f"; {other} more in environments of other bindings (--bindings)" if other else "")
        + "".join(f"\n  {s.base[:9]} -> {s.head[:9]}" for s in todo)
    )
    if args.list or not todo:
        return OK
    for step in todo:
        step.regexes = args.bench
    return steps.make(
        todo,
        conf=conf,
        machine_name=name,
        info=info,
        results_dir=results_dir,
        settings=settings,
        command=command_line(argv),
        later=steps_hint(args, results_dir, "--bindings", bindings),
    )


def recheck(args, name, info, results_dir, conf, command):
    """Measure the history's regressions that are not yet confirmed again, on this machine start,
    each step in the cuda-bindings it was measured with, its flagged cases and the harness only;
    then say how each stands."""
    if args.bench or args.bindings:
        raise asvrun.RunError(
            "steps --recheck measures each flag in its own step's cuda-bindings, its own case and "
            "the harness: it takes no --bench or --bindings"
        )
    if args.layouts != "random":
        raise asvrun.RunError(
            "steps --recheck measures with a layout per process (--layouts random): one fixed "
            "layout per build comes back on every start, so it could not confirm or clear a "
            "flag made with one"
        )
    start, boot = steps.this_start()
    todo, here = steps.recheck_todo(results_dir, name, start)
    log(
        f"steps --recheck: {sum(len(s.cases) for s in todo)} regression(s) in {len(todo)} step(s) "
        f"of {results_dir / name} to measure again on this machine start (booted {boot})"
        + "".join(
            f"\n  {s.base[:9]} -> {s.head[:9]} {case} (cuda-bindings {s.bindings})"
            for s in todo
            for case in s.cases
        )
        + (
            f"\n{len(here)} more flagged on this machine start: only another start confirms them"
            + "".join(f"\n  {base[:9]} -> {head[:9]} {case}" for base, head, case in here)
            if here
            else ""
        )
    )
    if args.list or not todo:
        return OK
    status = steps.make(
        todo,
        conf=conf,
        machine_name=name,
        info=info,
        results_dir=results_dir,
        settings=settings_of(args),
        command=command,
        later=steps_hint(args, results_dir, "--recheck"),
    )
    for line in steps.recheck_report(results_dir, name, todo, start):
        log(line)
    return status
