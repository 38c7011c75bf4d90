"""``cuda-bench compare BASE HEAD``: the pull-request gate; ``cuda-bench aa COMMIT``: this machine's
thresholds."""

from __future__ import annotations

from pathlib import Path

from cuda_bench.commands.common import (
    SKIPS,
    asv_options,
    at_least,
    block_option,
    command_line,
    cupti_option,
    keep_out_of_the_history,
    key_value,
    log,
    no_counts_option,
    no_instructions_option,
    paired_context,
    paired_options,
    settings_of,
    this_machine,
)
from cuda_bench.compare import countpass, gate, instrpass, keep, paired, summaries
from cuda_bench.foundations import machine, stats
from cuda_bench.foundations.paths import RESULTS, WORK, label
from cuda_bench.foundations.status import INCOMPLETE, OK
from cuda_bench.results import instructions_read, records
from cuda_bench.run import asvrun, imports


def add(sub):
    for name in ("compare", "aa"):
        text = {
            "compare": "BASE against HEAD with the paired engine: the pull-request gate",
            "aa": "one commit against itself with the paired engine: this machine's thresholds",
        }[name]
        p = sub.add_parser(
            name,
            description=f"{text}. Exit status: 1 when a case regressed (its whole 95% interval "
            "beyond its threshold; for compare, the comment names a regressed case whose call is "
            "over its budget at HEAD and not at BASE as taken over budget by the change: "
            "budgets.json5, judged from both sides' over-C++ records in results/<machine>/, where "
            "there are any: `cuda-bench over-cpp REV`), 2 when something could not be measured (or "
            "only without some process pairs), 3 when the command could not start, else 0.",
        )
        if name == "compare":
            p.add_argument("base", help="commit, tag or branch to compare against")
            p.add_argument("head", help="commit, tag or branch to test")
            p.add_argument(
                "--kind",
                default="pr",
                choices=["pr", "injected", "release", "aa"],
                help="recorded in summary.json (default pr)",
            )
            p.add_argument(
                "--expected",
                nargs="*",
                default=[],
                metavar="CASE",
                help="cases an injected change should slow (recorded in summary.json)",
            )
            no_counts_option(
                p,
                "skip the counting pass after the timing: each case's work per call in both "
                "builds (CUDA API calls, NVRTC calls, Python and C calls, net memory blocks; "
                "`cuda-bench counts --help`), kept in summary.json and named in the comment where "
                "it changed",
            )
            cupti_option(p)
            no_instructions_option(p)
            for side in ("base", "head"):
                p.add_argument(
                    f"--{side}-env",
                    action="append",
                    default=[],
                    metavar="KEY=VALUE",
                    type=key_value,
                    help=f"an environment variable for the {side} side's workers only (recorded in "
                    "summary.json), e.g. CUDA_BENCH_LEAVE_OUT=core: that side's processes never "
                    "import cuda.core, to see whether its presence moves the other forms",
                )
        else:
            aa_options(p)
        asv_options(p, results_dir=False)
        paired_options(p)
        p.add_argument(
            "--out",
            metavar="DIR",
            help="summary.json, summary.md (the comment) and the worker logs "
            "(default .asv/compare/BASE-HEAD)",
        )
        p.add_argument("--output", metavar="FILE", help="also write the comment here")


def aa_options(p):
    """What ``aa`` takes beside the options it shares with ``compare``."""
    p.add_argument("commit", help="commit, tag or branch")
    p.add_argument(
        "--against",
        metavar="REV",
        help="a commit with the same behaviour but a rebuilt binary (e.g. a comment-only "
        "change in a .pyx) on the head side: the thresholds then also cover the "
        "machine-code layout shift that any rebuild brings",
    )
    p.add_argument(
        "--no-write",
        action="store_true",
        help="do not record the thresholds in results/<machine>/calibration.jsonl",
    )
    p.add_argument(
        "--window",
        type=at_least(3),
        metavar="N",
        help="the commit N times in one pass (cuda-bench window), each adjacent pair an "
        "A/A step: the thresholds a window's steps are judged by (a window's intervals "
        "are wider than a paired step's), recorded as the window engine's",
    )
    block_option(p)


def main(args, argv):
    settings = settings_of(args)
    aa = args.command == "aa"
    name, info = this_machine(args, SKIPS if aa else gate.WITHOUT_GPU)
    if aa:
        keep_out_of_the_history(args, info, "the thresholds are")
    conf, repo = paired_context(args)
    if aa and args.window:
        return window_aa(args, argv, conf, repo, settings, name, info)
    base, head = (args.commit, args.against or args.commit) if aa else (args.base, args.head)
    out = Path(args.out or WORK / "compare" / f"{label(base)}-{label(head)}").resolve()
    thresholds = {} if aa else records.calibration(RESULTS / name)
    none = (
        f"none calibrated on {name} yet (cuda-bench aa): {stats.DEFAULT_THRESHOLD:.0%} for "
        "every case"
    )
    log(
        "thresholds: "
        + (
            "A/A calibration"
            if aa
            else f"{len(thresholds)} calibrated on {name}"
            if thresholds
            else none
        )
    )
    env = {side: dict(getattr(args, f"{side}_env", [])) for side in ("base", "head")}
    data, text, report = gate.gate(
        repo,
        base,
        head,
        conf=conf,
        kind="aa" if aa else args.kind,
        settings=settings,
        bench=args.bench,
        thresholds=thresholds,
        out=out,
        command=command_line(argv),
        info=info,
        progress=log,
        env=env,
        expected=getattr(args, "expected", []),
        # over-C++ runs, which the budgets are judged from, need a GPU: none without one
        over_cpp_dir=None if aa or not machine.has_gpu(info) else RESULTS / name,
    )
    if report is None:  # identical builds: nothing measured; the head's budgets still judged
        print(text)
        if args.output:
            Path(args.output).write_text(text)
        return gate.exit_status(data)
    built = data.get("build_seconds") or 0.0  # optional in a record
    if not aa:
        text = passes_after(args, data, report, settings, out) or text
    print(text)
    if args.output:
        Path(args.output).write_text(text)
    log(f"{out}/summary.json: {report.seconds:.0f} s measuring, {built:.0f} s building")
    if aa and not args.no_write:
        record = gate.calibration_record(data)
        try:
            records.append(RESULTS / name, "calibration", record)
        except (OSError, records.RecordError) as exc:
            log(
                "calibration: measured, not recorded in "
                f"results/{name}/{records.FILES['calibration']} ({exc}); its A/A run is in "
                f"{out}/summary.json"
            )
            return INCOMPLETE
        log(
            f"calibration: {len(record['thresholds'])} thresholds -> "
            f"results/{name}/{records.FILES['calibration']}"
        )
    # an A/A calibrates thresholds: a case beyond the default is what it measures, never a
    # regression
    if aa:
        return INCOMPLETE if summaries.incomplete(data) else OK
    return gate.exit_status(data)


def window_aa(args, argv, conf, repo, settings, name, info):
    """``aa COMMIT --window N``: the commit N times in one pass, kept in --out; its steps' reach
    recorded as the window engine's thresholds (``records.calibration(folder, "window")``), and what
    the machine's thresholds so far would have said of them."""
    commit = asvrun.resolve_one(repo, args.commit)
    out = Path(args.out or WORK / "aa" / f"{label(args.commit)}-window{args.window}").resolve()
    kept = keep.into_folder(
        conf,
        repo,
        [commit] * args.window,
        out,
        calibrated=RESULTS / name,
        settings=settings,
        bench=args.bench,
        block=max(args.block, args.window),
        command=command_line(argv),
        info=info,
        progress=log,
    )
    record = gate.window_calibration_record(kept.found, args.window)
    for line in gate.window_aa_lines(kept.found, records.calibration(RESULTS / name)):
        log(line)
    status = INCOMPLETE if any(summaries.incomplete(d) for d in kept.found) else OK
    if kept.reused == kept.blocks:
        log(f"calibration: nothing measured now ({out} holds this window): recorded when measured")
        return status
    if args.no_write:
        return status
    try:
        records.append(RESULTS / name, "calibration", record)
    except (OSError, records.RecordError) as exc:
        log(f"calibration: measured, not recorded ({exc}); the window is in {out}")
        return INCOMPLETE
    log(
        f"calibration: {len(record['thresholds'])} window thresholds -> "
        f"results/{name}/{records.FILES['calibration']}"
    )
    return status


def passes_after(args, data, report, settings, out):
    """The counting pass (with what ``import cuda.core`` imports) and the instruction pass after
    compare's timing, unless --no-counts or --no-instructions, each kept in ``data`` and its
    summary.json and comment written again: the comment, or None where neither ran."""
    text = None
    if not args.no_counts:
        data["counts"] = count_both(report, settings, args.bench, out, args.cupti)
        data["imports"] = imports.measure_sides(report.sides, progress=log)
        text = summaries.write(out, data)
    if not args.no_instructions:
        data["instructions"] = instructions_both(report, settings, args.bench, out)
        text = summaries.write(out, data)
    return text


def count_both(report, settings, bench, out, cupti=()):
    """The counting pass after the timing: {"base": record, "head": record} of both builds' work per
    call, or {"error": why} when it could not run (the timing stands either way)."""
    names = gate.case_names(bench, settings.benchmark_dir)
    log(f"counts: {len(names)} cases in both builds, one worker process each")
    try:
        sides = countpass.with_cupti(report.sides, cupti, WORK / "cupti", log)
        return countpass.measure(
            sides, names, log_dir=out / "logs", progress=log, benchmark_dir=settings.benchmark_dir
        )
    except (paired.WorkerError, OSError, gate.CompareError) as exc:
        log(f"counts: not counted ({exc})")
        return {"error": str(exc)}


def instructions_both(report, settings, bench, out):
    """The instruction pass after the timing: {"base": record, "head": record, "functions": {case:
    {"base": rows, "head": rows}}} of both builds, the functions of the cases whose count moved; or
    {"error": why} where it could not run (the timing stands either way)."""
    names = gate.case_names(bench, settings.benchmark_dir)
    try:
        found = instrpass.measure(
            report.sides, names, out=out / "instructions", progress=log, settings=settings
        )
    except (instrpass.InstructionsError, paired.WorkerError, OSError) as exc:
        log(f"instructions: not counted ({exc})")
        return {"error": str(exc)}
    (base, base_rows), (head, head_rows) = (found[side.name] for side in report.sides)
    moved = instructions_read.moved(base, head)
    functions = {name: {"base": base_rows.get(name), "head": head_rows.get(name)} for name in moved}
    return {"base": base, "head": head, "functions": functions}
