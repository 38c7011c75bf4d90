"""scripts/bench: one command for every stage. ``scripts/bench COMMAND --help`` says what each option does.

The stages, one module each: build (``cuda_bench.build``) -> run (``cuda_bench.run``, asv) -> results
(``cuda_bench.results``) -> compare (``cuda_bench.compare``, the paired engine) -> publish
(``cuda_bench.publish``, the dashboard). A problem the user can fix is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import time
from pathlib import Path

from cuda_bench import build, compare, machine, paired, publish, report, results, run, stats, suite
from cuda_bench.layout import BENCHMARKS, CALIBRATION, CONF, FLOOR, OVERHEAD, RESULTS, ROOT, STEPS, WORK, label
from cuda_bench.text import interval, measurements, standing

DESCRIPTION = """\
cuda-python-bench: how fast is each cuda.core / cuda.bindings call, commit after commit.

commands:
  run        asv run over commits of cuda-python (default: main's newest), pair each newly measured
             commit with the previous one, time the newest against C++ (paired), publish html/ (the main job)
  ladder     the same over every cuda-core-v* release tag and main's head (--new: only releases newer
             than the newest measured, each paired with the release before it: the nightly job)
  steps      the paired steps the history lacks (a step that failed, runs with --no-steps), made now
  compare    BASE vs HEAD with the paired engine: the pull-request gate (exit 1 on a regression)
  aa         the paired engine on one commit against itself: calibrates each case's threshold
  overhead   each Python form against its C++ twin, sample by sample in one process, at one commit
  publish    html/ from results/ again (asv's pages, self-contained, the overview, the paired steps)
  serve      serve html/ on http://127.0.0.1:8080
  machine    record this machine (GPU, driver, CPU) for asv
  prebuild   build several commits into the wheel cache at once, before a run

examples:
  scripts/bench run                               # newest commit of main
  scripts/bench run HEAD~20..HEAD                 # the last 20 commits (anything `asv run` takes)
  scripts/bench run --repo ~/src/cuda-python main..my-branch
  scripts/bench compare main my-branch --repo ~/src/cuda-python
  scripts/bench aa main                           # thresholds for this machine
  scripts/bench overhead main                     # over C++, for the overview
"""


def asv_options(parser, results_dir=True):
    group = parser.add_argument_group("what to build and where (asv.conf.json is never edited: "
                                      "a derived copy, .asv/asv.conf.local-PID.json, lives as long as the command)")
    group.add_argument("--repo", metavar="PATH", help="a local clone or fork of cuda-python instead of the "
                       "configured GitHub URL (scripts/shallow_clone.sh makes a small one)")
    group.add_argument("--bindings", metavar="VERSION", help="take this cuda-bindings wheel and build only "
                       "cuda_pathfinder + cuda_core (default from asv.conf.json: 13.3.1); 'source' builds "
                       "cuda_bindings from each commit (a quarter hour); 'auto' takes 13.3.1 where the commit's "
                       "cuda_core has a cu13 extra, else 12.9.10")
    group.add_argument("--system-site", metavar="DIR", help="reuse CuPy and numpy from this site-packages "
                       "instead of installing them (GPU boxes without network)")
    group.add_argument("--machine", metavar="NAME", help="asv machine name (default: after the GPU, e.g. "
                       "nvidia-h200; cpu-<host> without one)")
    if results_dir:
        group.add_argument("--results-dir", metavar="DIR", help="asv's results there instead of results/ "
                           "(default on a machine without a GPU: .asv/results-no-gpu, kept out of the history)")


def paired_options(parser, defaults=None):
    group = parser.add_argument_group("the paired engine (docs/measurement.md says how these were chosen)")
    defaults = defaults or paired.Settings()
    group.add_argument("--pairs", type=int, default=defaults.pairs,
                       help="process pairs; a case's 95%% interval is over their ratios (default %(default)s)")
    group.add_argument("--layouts", choices=["random", "fixed"], default=defaults.layouts,
                       help="random: ASLR on, each worker process its own memory layout; fixed: ASLR off, one "
                       "layout per build for the run (default %(default)s; the over-C++ run that run and ladder "
                       "make keeps over C++'s own settings)")
    group.add_argument("--seconds", type=float, default=defaults.seconds,
                       help="seconds of interleaved samples per case and process pair (default %(default)s)")
    group.add_argument("--jobs", type=at_least(0), default=0,
                       help="process pairs at a time, each on its own core (default: every core but the first)")
    group.add_argument("--bench", "-b", action="append", default=[], metavar="REGEX", type=regex,
                       help="only the cases whose name matches (repeatable, as asv's -b)")


def regex(text):
    """A --bench or --tags value: a regular expression, or one line saying why not."""
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular expression ({exc}); a case name's "
                                         "parentheses need a backslash: \\(") from None
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


def key_value(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def command_line(argv):
    """How a record names the command that made it (report.run_label reads its --out)."""
    return "scripts/bench " + " ".join(map(shlex.quote, argv))


def settings_of(args):
    if args.pairs < 1 or args.seconds <= 0:
        raise run.RunError("--pairs must be at least 1 and --seconds above 0")
    return paired.Settings(pairs=args.pairs, seconds=args.seconds, jobs=args.jobs, layouts=args.layouts)


def parser():
    top = argparse.ArgumentParser(prog="scripts/bench", usage="%(prog)s [-h] COMMAND ...",
                                  description=DESCRIPTION,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    # the commands are listed once, in DESCRIPTION
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS,
                             prog="scripts/bench")  # "scripts/bench steps ...", not the top usage line
    for name, text in (("run", "asv run, then paired steps, then publish"),
                       ("ladder", "asv run over every cuda-core release tag and main's head, then as run")):
        p = sub.add_parser(name, description=f"{text}. Everything after the options goes to "
                           "`asv run` unchanged (a range such as HEAD~5..HEAD, --quick ...).")
        asv_options(p)
        p.add_argument("--cpu-affinity", default="auto", metavar="LIST", help="pin asv's benchmark processes "
                       "('auto': the last core on machines with 4 or more; 'none'; or a list such as 7)")
        p.add_argument("--no-publish", action="store_true", help="leave html/ as it is")
        p.add_argument("--no-steps", action="store_true", help="skip the paired steps after asv run")
        p.add_argument("--no-overhead", action="store_true", help="skip the paired over-C++ measurement of the "
                       "newest measured commit after asv run (on a machine with a GPU)")
        if name == "ladder":
            p.add_argument("--tags", metavar="REGEX", type=regex, help="only ladder names (tags, 'main') that match")
            p.add_argument("--new", action="store_true", help="only the releases newer than the newest one this "
                           "machine measured in the ladder's environment (with --tags: of the matching ones), "
                           "each then paired with the release before it (the nightly job); nothing to do when "
                           "there is none, or before a first full ladder")
        paired_options(p)
    p = sub.add_parser("steps", description="pair each measured commit of the history that has no paired step "
                       "with the measured commit before it (a step that could not be measured, a run with "
                       "--no-steps), in the environments built with --bindings; appends to "
                       "results/<machine>/steps.jsonl. Exit status 2 when a step could not be measured.")
    asv_options(p)
    paired_options(p)
    p.add_argument("--list", action="store_true", help="only list the missing steps (with --recheck: the "
                   "regressions to measure again)")
    p.add_argument("--recheck", action="store_true", help="instead, measure again the cases the history's steps "
                   "flagged but that are not yet confirmed (on one machine start only, or only with one fixed "
                   "layout per build): a second start's flag, one of the two with a layout per process, confirms "
                   "a regression, a measurement without one does not reproduce it (docs/measurement.md, \"One "
                   "start is not enough\")")
    for name, text in (("compare", "BASE against HEAD with the paired engine: the pull-request gate"),
                       ("aa", "one commit against itself with the paired engine: this machine's thresholds")):
        p = sub.add_parser(name, description=f"{text}. Exit status: 1 when a case regressed (its whole "
                           "95% interval beyond its threshold), 2 when something could not be measured (or only "
                           "without some process pairs), else 0.")
        if name == "compare":
            p.add_argument("base", help="commit, tag or branch to compare against")
            p.add_argument("head", help="commit, tag or branch to test")
            p.add_argument("--kind", default="pr", choices=["pr", "injected", "release", "aa"],
                           help="recorded in summary.json (default pr)")
            p.add_argument("--expected", nargs="*", default=[], metavar="CASE",
                           help="cases an injected change should slow (recorded in summary.json)")
            for side in ("base", "head"):
                p.add_argument(f"--{side}-env", action="append", default=[], metavar="KEY=VALUE",
                               type=key_value, help=f"an environment variable for the {side} side's workers only "
                               "(recorded in summary.json), e.g. CUDA_BENCH_LEAVE_OUT=core: that side's processes "
                               "never import cuda.core, to see whether its presence moves the other forms")
        else:
            p.add_argument("commit", help="commit, tag or branch")
            p.add_argument("--against", metavar="REV", help="a commit with the same behaviour but a rebuilt binary "
                           "(e.g. a comment-only change in a .pyx) on the head side: the thresholds then also cover "
                           "the machine-code layout shift that any rebuild brings")
            p.add_argument("--no-write", action="store_true",
                           help="do not record the thresholds in results/<machine>/calibration.jsonl")
        asv_options(p, results_dir=False)
        paired_options(p)
        p.add_argument("--out", metavar="DIR", help="summary.json, comment.md and the worker logs "
                       "(default .asv/compare/BASE-HEAD)")
        p.add_argument("--output", metavar="FILE", help="also write the comment here")
    p = sub.add_parser("overhead", description="in one build, each Python form and its C++ twin timed "
                       "alternately, sample by sample, in one process; several fresh processes give each case's "
                       "interval. Appends to results/<machine>/overhead.jsonl (the overview's 'over C++'). Exit "
                       "status 2 when a case could not be measured, or only without some processes.")
    p.add_argument("commit", help="commit, tag or branch")
    asv_options(p, results_dir=False)
    paired_options(p, paired.Settings.over_cpp())
    p.add_argument("--no-write", action="store_true", help="do not append to results/<machine>/overhead.jsonl")
    p.add_argument("--keep-groups", action="store_true", help="also write every ABBA group the medians come "
                   "from to OUT/groups.json.gz (about 20 MB gzipped for the whole suite; -b for fewer cases)")
    p.add_argument("--out", metavar="DIR", help="overhead.json, overhead.md and the worker logs "
                   "(default .asv/overhead/COMMIT)")
    p = sub.add_parser("publish", description="asv publish into a new "
                       "folder, made self-contained, the overview and the paired steps added; it replaces html/ "
                       "only when complete.")
    p.add_argument("--repo", metavar="PATH", help="a local clone of cuda-python (asv needs one to order commits)")
    p.add_argument("--results-dir", metavar="DIR", help="publish these results instead of results/")
    p = sub.add_parser("serve", description="asv preview: html/ on localhost "
                       "(browsers refuse asv's data from file://)")
    p.add_argument("--port", default="8080", help="the port on 127.0.0.1 (default %(default)s)")
    p = sub.add_parser("machine", description="write this machine (GPU, driver, CPU) "
                       "into asv's machine file")
    p.add_argument("--machine", metavar="NAME", help="asv machine name (default: after the GPU, e.g. nvidia-h200; "
                   "cpu-<host> without one)")
    p = sub.add_parser("prebuild", description="build REVs into the wheel cache, N at a time (each in its own "
                       "checkout and venv); asv's build step and the paired engine then find them, when they "
                       "take the same cuda-bindings (--bindings, default as theirs).")
    p.add_argument("--bindings", metavar="VERSION", help="as run's --bindings (default from asv.conf.json, as run "
                   "and compare: 13.3.1; CUDA_BENCH_BINDINGS where set)")
    p.add_argument("revs", nargs="+", metavar="REV", help="what `asv run` accepts: SHAs, tags, branches")
    p.add_argument("--repo", metavar="PATH", required=True, help="a local clone of cuda-python")
    p.add_argument("--parallel", type=at_least(1), default=4, help="builds at a time, the cores shared (default %(default)s)")
    p.add_argument("--logs", metavar="DIR", help="keep each build's log here")
    return top


# what measuring a commit can raise that the user can act on (OSError: a full disk, a folder not writable): a
# step or an over-C++ run reports it and the run goes on; at the top it is one line and exit status 2
MEASURE_ERRORS = (build.BuildError, compare.CompareError, paired.WorkerError, OSError)


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def paired_context(args):
    """(local repo, bindings, requirements, system site) for the paired engine."""
    conf = json.loads(run.derived_conf(args.repo, args.bindings, None, args.system_site).read_text())
    return run.local_repo(conf), run.bindings_of(conf), run.requirements(conf), run.system_site_of(conf)


def keep_out_of_the_history(args, info, what):
    """Without a GPU, what aa and overhead measure is not written to results/ (real GPU runs only)."""
    if not machine.has_gpu(info) and not getattr(args, "no_write", True):
        log(f"no GPU here: {what} not written to results/, which holds GPU runs only")
        args.no_write = True


def cmd_compare(args, argv):
    settings = settings_of(args)
    name, info = machine.record(args.machine)
    keep_out_of_the_history(args, info, "the thresholds are")
    repo, bindings, reqs, site = paired_context(args)
    aa = args.command == "aa"
    base, head = (args.commit, args.against or args.commit) if aa else (args.base, args.head)
    out = Path(args.out or WORK / "compare" / f"{label(base)}-{label(head)}").resolve()
    thresholds = {} if aa else results.calibration(RESULTS, name)
    log(f"thresholds: {'A/A calibration' if aa else (f'{len(thresholds)} calibrated on {name}' if thresholds else f'none calibrated on {name} yet (scripts/bench aa): {stats.DEFAULT_THRESHOLD:.0%} for every case')}")
    report, built = compare.measure(repo, base, head, bindings=bindings, requirements=reqs, system_site=site,
                                    settings=settings, bench=args.bench, thresholds=thresholds,
                                    log_dir=out / "logs", progress=log,
                                    env={side: dict(getattr(args, f"{side}_env", [])) for side in ("base", "head")})
    kind = "aa" if aa else args.kind
    data = compare.summary(report, kind, getattr(args, "expected", []), built,
                           command_line(argv), info)
    text = compare.write(out, data)
    print(text)
    if args.output:
        Path(args.output).write_text(text)
    log(f"{out}/summary.json: {report.seconds:.0f} s measuring, {built:.0f} s building")
    if aa and not args.no_write:
        record = compare.calibration_record(data)
        results.append_line(RESULTS / name / CALIBRATION, record)
        log(f"calibration: {len(record['thresholds'])} thresholds -> results/{name}/{CALIBRATION}")
    return compare.exit_status(data)


def cmd_overhead(args, argv):
    settings = settings_of(args)
    name, info = machine.record(args.machine)
    keep_out_of_the_history(args, info, "the over-C++ record is")
    repo, bindings, reqs, site = paired_context(args)
    out = Path(args.out or WORK / "overhead" / label(args.commit)).resolve()
    data = compare.overhead(repo, args.commit, bindings=bindings, requirements=reqs, system_site=site,
                            settings=settings, bench=args.bench, log_dir=out / "logs", progress=log,
                            command=command_line(argv), machine_info=info,
                            groups_file=out / "groups.json.gz" if args.keep_groups else None)
    print(compare.write_overhead(out, data))
    if not args.no_write:
        results.append_line(RESULTS / name / OVERHEAD, data)
        log(f"over C++: {len(data['cases'])} cases -> results/{name}/{OVERHEAD}")
    judge_overhead_run(RESULTS, name, data, written=not args.no_write)
    return 2 if compare.incomplete(data) else 0


def judge_overhead_run(results_dir, name, data, written):
    """How an over-C++ run just measured reads against the machine's recorded runs: a warning when it ran in
    the slow state (report.slow_run_note), else how it agrees with the commit's earlier run nearest the fast
    state (report.repeat_note)."""
    everything = results.overhead_runs(results_dir, name)
    recorded = [r for r in everything if r["commit"] == data["commit"]]
    mine = recorded if written else [*recorded, data]
    note = report.slow_run_note(mine, everything)
    if note:
        log(f"over C++: WARNING: {note}")
        return
    repeat = report.repeat_note(mine, everything)
    if repeat:
        log(f"over C++: {repeat}")


def history_steps(args, name, info, results_dir, todo, config, command, later):
    """Measure each (base, head, bindings, bench regexes) with the paired engine; append each step to
    steps.jsonl. ``later``: the command that makes a step that could not be measured."""
    conf = json.loads(Path(config).read_text())
    repo = run.local_repo(conf)
    thresholds = results.calibration(RESULTS, name)
    tags = run.release_tags(repo)
    status = 0
    for i, (base, head, bindings, bench) in enumerate(todo, 1):
        log(f"step {i}/{len(todo)}: {base[:9]} -> {head[:9]}")
        out = WORK / "steps" / f"{base[:12]}-{head[:12]}"
        try:
            report, built = compare.measure(repo, base, head, bindings=bindings,
                                            requirements=run.requirements(conf),
                                            system_site=run.system_site_of(conf), settings=settings_of(args),
                                            bench=bench, thresholds=thresholds, log_dir=out / "logs",
                                            progress=log)
            data = compare.summary(report, "step", (), built, command, info) | {
                "bindings": bindings,
                "release_tags": [tags[base], tags[head]] if base in tags and head in tags else None}
            results.append_line(Path(results_dir) / name / STEPS, data)
        except MEASURE_ERRORS as exc:  # the other steps still run
            log(f"step {base[:9]} -> {head[:9]} not measured: {exc} (`{later}` makes it later)")
            status = 2
            continue
        try:
            compare.write(out, data)
        except OSError as exc:  # the record is in the history; only its copy for reading is not
            log(f"step {base[:9]} -> {head[:9]}: recorded, but its summary and comment not written to {out}: {exc}")
        flagged = compare.regressions(data)
        log(f"step {base[:9]} -> {head[:9]}: {len(flagged)} regression(s)"
            + "".join(f"\n  {c['name']} {interval(c)}" for c in flagged))
        status = status or (2 if compare.incomplete(data) else 0)
    return status


def later_hint(args, results_dir, *flags):
    """The `scripts/bench steps` command that finds the same steps again: ``flags``, then this command's
    repository, machine name, system site and results folder where they were given."""
    given = [(option, getattr(args, option[2:].replace("-", "_"), None))
             for option in ("--repo", "--machine", "--system-site")]
    here = Path(results_dir).resolve() == RESULTS.resolve()
    given += [] if here else [("--results-dir", results_dir)]
    return shlex.join(["scripts/bench", "steps", *flags, *[str(x) for option, value in given if value
                                                            for x in (option, value)]])


def over_cpp(args, name, info, results_dir, before, config, command):
    """The overview's "over C++" for the newest newly measured commit, paired in one process."""
    commit = run.newest_measured(results_dir, name, before)
    if commit is None:
        return 0
    try:
        items = compare.overhead_items(args.bench, BENCHMARKS)
    except compare.CompareError:  # -b matches no case
        items = []
    if not items:
        log(f"over C++: nothing to time ({args.bench} match no case with a C++ twin)")
        return 0
    conf = json.loads(Path(config).read_text())
    out = WORK / "overhead" / commit[:12]
    try:
        data = compare.overhead(run.local_repo(conf), commit, bindings=run.bindings_of(conf),
                                requirements=run.requirements(conf), system_site=run.system_site_of(conf),
                                settings=paired.Settings.over_cpp(seconds=args.seconds, jobs=args.jobs),
                                bench=args.bench, log_dir=out / "logs", progress=log, command=command,
                                machine_info=info)
        results.append_line(Path(results_dir) / name / OVERHEAD, data)
    except MEASURE_ERRORS as exc:  # the run still publishes
        log(f"over C++ at {commit[:9]} not measured: {exc}")
        return 2
    try:
        compare.write_overhead(out, data)
    except OSError as exc:  # the record is in the history; only its copy for reading is not
        log(f"over C++ at {commit[:9]}: recorded, but its table not written to {out}: {exc}")
    log(f"over C++ at {commit[:9]}: {len(data['cases'])} cases -> {Path(results_dir) / name / OVERHEAD}")
    judge_overhead_run(results_dir, name, data, written=True)
    return 2 if compare.incomplete(data) else 0


def cmd_run(args, rest, argv):
    settings_of(args)  # checked before anything runs
    command = command_line(argv)  # recorded in the steps and over-C++ records, as compare and overhead do
    name, info = machine.record(args.machine)
    results_dir = run.no_gpu_results_dir(info, args.results_dir)
    config = run.derived_conf(args.repo, args.bindings or ("auto" if args.command == "ladder" else None),
                              results_dir, args.system_site)
    conf = json.loads(config.read_text())
    run.check_reachable(conf["repo"])
    if args.command == "ladder":
        commits = run.release_ladder(conf["repo"], (conf.get("branches") or ["main"])[0])
        if args.tags:
            commits = [(tag, sha) for tag, sha in commits if re.search(args.tags, tag)]
        if args.new:
            where = f"{Path(conf['results_dir']) / name} (cuda-bindings {run.bindings_of(conf)})"
            newest, commits = run.newer_releases(commits, run.measured_in(conf["results_dir"], name, conf))
            if newest is None:
                log(f"ladder --new: no cuda-core release measured yet in {where}: nothing to pair a new one "
                    "with; `scripts/bench ladder` makes the ladder first (every release built and run)")
                return 0
            if not commits:
                log(f"ladder --new: no cuda-core release newer than {newest[0]}, the newest measured in {where}: "
                    "nothing to run")
                return 0
            log(f"ladder --new: newer than {newest[0]}, the newest measured in {where}")
        if not commits:
            raise run.RunError(f"{conf['repo']} has no cuda-core-v* tags" + (f" matching {args.tags!r}" if args.tags else ""))
        hashfile = WORK / "ladder.txt"
        hashfile.write_text("".join(sha + "\n" for _, sha in commits))
        log("ladder " + ", ".join(tag for tag, _ in commits))
        rest = [f"HASHFILE:{hashfile}", *rest]
    results_dir = Path(conf["results_dir"])
    before = run.snapshot(results_dir, name)
    with run.build_progress() as progress_env:
        # --show-stderr: skip reasons and failures reach the console
        bench = [arg for regex in args.bench for arg in ("--bench", regex)]  # asv's -b, as the paired steps'
        status = run.asv("run", "--machine", name, "--show-stderr", *bench, *rest, config=config, timed=True,
                         affinity=args.cpu_affinity, env=progress_env)
    try:
        run.record_builds(name, config)
    except OSError as exc:  # what asv measured is still paired and published
        log(f"what each commit was built from not recorded: {exc}")
    if status:  # asv exits non-zero when any one benchmark failed: what it did measure is still paired
        log(f"asv run exited {status}; pairing and publishing what it measured")
    if not args.no_steps:
        if args.command == "ladder" and args.new:  # release after release, not by commit date
            pairs = run.release_chain(newest, commits, run.measured_in(results_dir, name, conf))
        else:
            pairs = run.new_steps(results_dir, name, before)
        if pairs:
            bindings = run.bindings_of(conf)
            status = history_steps(args, name, info, results_dir, [(b, h, bindings, args.bench) for b, h in pairs],
                                   config, command, later_hint(args, results_dir, "--bindings", bindings)) or status
        else:
            log("steps: no newly measured commit has a measured predecessor on this machine")
    if not args.no_overhead and machine.has_gpu(info):
        status = over_cpp(args, name, info, results_dir, before, config, command) or status
    if not args.no_publish:
        if args.results_dir is None and not machine.has_gpu(info):  # this run stayed out of the history
            log(f"publish: html/ from the history (results/); this run's results stay in {results_dir} "
                "(asv's tables above)")
            config = run.derived_conf(args.repo, None, None, args.system_site)
        publish.publish(config)
    return status


def cmd_steps(args, argv):
    settings_of(args)
    name, info = machine.record(args.machine)
    results_dir = run.no_gpu_results_dir(info, args.results_dir)
    config = run.derived_conf(args.repo, args.bindings, results_dir, args.system_site)
    conf = json.loads(config.read_text())
    results_dir, bindings = Path(conf["results_dir"]), run.bindings_of(conf)
    if args.recheck:
        return recheck(args, name, info, results_dir, config, conf, command_line(argv))
    missing = run.missing_steps(results_dir, name)  # every results file read once
    pairs = missing.get(bindings, [])
    other = sum(len(more) for spec, more in missing.items() if spec != bindings)
    log(f"steps: {len(pairs)} missing in {results_dir / name} (cuda-bindings {bindings})"
        + (f"; {other} more in environments of other bindings (--bindings)" if other else "")
        + "".join(f"\n  {base[:9]} -> {head[:9]}" for base, head in pairs))
    if args.list or not pairs:
        return 0
    return history_steps(args, name, info, results_dir, [(b, h, bindings, args.bench) for b, h in pairs], config,
                         command_line(argv), later_hint(args, results_dir, "--bindings", bindings))


def recheck(args, name, info, results_dir, config, conf, command):
    """`scripts/bench steps --recheck`: measure the history's regressions that are not yet confirmed again, on
    this machine start, each step in the cuda-bindings it was measured with, its flagged cases and the floor
    only; then say how each stands (``stats.repeated_verdict``)."""
    if args.bench or args.bindings:
        log("steps --recheck measures each flag in its own step's cuda-bindings, its own case and the floor: "
            "it takes no --bench or --bindings")
        return 2
    if args.layouts != "random":
        log("steps --recheck measures with a layout per process (--layouts random): one fixed layout per build "
            "comes back on every start, so it could not confirm or clear a flag made with one")
        return 2
    host = machine.host()
    start = results.start_id(host)
    if start is None:
        log("steps --recheck: this machine does not say which start it is on (no /proc/sys/kernel/random/boot_id, "
            "no btime in /proc/stat), so a recheck could not tell this start from the one that flagged")
        return 2
    todo, here = run.to_recheck(results_dir, name, start)
    known = set(suite.cases())
    for (base, head), (_, cases) in todo.items():
        for case in [c for c in cases if c not in known]:
            log(f"steps --recheck: {base[:9]} -> {head[:9]} {case} is not in the suite any more: not measured")
            cases.remove(case)
    todo = {pair: (bindings, cases) for pair, (bindings, cases) in todo.items() if cases}
    log(f"steps --recheck: {sum(len(c) for _, c in todo.values())} regression(s) in {len(todo)} step(s) of "
        f"{results_dir / name} to measure again on this machine start (booted {host['boot']})"
        + "".join(f"\n  {base[:9]} -> {head[:9]} {case} (cuda-bindings {bindings})"
                  for (base, head), (bindings, cases) in todo.items() for case in cases)
        + (f"\n{len(here)} more flagged on this machine start: only another start confirms them"
           + "".join(f"\n  {base[:9]} -> {head[:9]} {case}" for base, head, case in here) if here else ""))
    if args.list or not todo:
        return 0
    steps = [(base, head, bindings, [f"^{re.escape(c)}$" for c in cases] + [f"^{re.escape(FLOOR)}\\("])
             for (base, head), (bindings, cases) in todo.items()]
    status = history_steps(args, name, info, results_dir, steps, config, command,
                           later_hint(args, results_dir, "--recheck"))
    merged = {(s["base"], s["head"]): s for s in results.steps(results_dir, name)}
    for (base, head), (_, cases) in todo.items():
        for case in merged[(base, head)]["cases"]:
            if case["name"] in cases and start in {m["start_id"] for m in case["measurements"]}:  # measured now
                versions = merged[(base, head)].get("versions")
                said = f" ({standing(case, versions)})" if case["verdict"] == "regression" else ""
                log(f"{base[:9]} -> {head[:9]} {case['name']}: {case['verdict']}{said}: {measurements(case)}")
    return status


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    top = parser()
    args, rest = top.parse_known_args(argv)
    if rest and args.command not in ("run", "ladder"):
        top.error(f"unrecognised arguments: {' '.join(rest)}")
    start = time.monotonic()
    try:
        if args.command in ("run", "ladder"):
            status = cmd_run(args, rest, argv)
        elif args.command in ("compare", "aa"):
            status = cmd_compare(args, argv)
        elif args.command == "overhead":
            status = cmd_overhead(args, argv)
        elif args.command == "steps":
            status = cmd_steps(args, argv)
        elif args.command == "publish":
            status = 0
            config = run.derived_conf(args.repo, None, args.results_dir, None)
            conf = json.loads(config.read_text())
            if not run.asv_mirror(conf).exists():  # asv publish needs the project's commits
                run.check_reachable(conf["repo"])
            publish.publish(config)
        elif args.command == "serve":
            os.chdir(ROOT)  # asv in place of this process: stopping `scripts/bench serve` stops the server
            os.execv(sys.executable,
                     [sys.executable, "-m", "asv", "preview", "--port", args.port, "--config", str(CONF)])
        elif args.command == "machine":
            machine.record(args.machine)
            status = 0
        else:  # prebuild
            bindings = (args.bindings or os.environ.get("CUDA_BENCH_BINDINGS")
                        or run.bindings_of(run.load_conf()))  # what run and compare take unless told
            records = build.prebuild(Path(args.repo).resolve(), args.revs, args.parallel, args.logs, bindings)
            status = 0 if all(r.get("ok") for r in records) else 1
    except (run.RunError, *MEASURE_ERRORS, publish.DashboardError) as exc:
        log(str(exc))
        return 2
    except KeyboardInterrupt:
        log(f"interrupted after {time.monotonic() - start:.0f} s")
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
