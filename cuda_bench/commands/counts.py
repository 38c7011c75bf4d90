"""``cuda-bench counts REV [REV2]``: the work per call of every case (CUDA API calls by name, NVRTC
calls, Python calls, C calls, net memory blocks) at one or two commits, counted in a pass of its own
(``cuda_bench.compare.countpass``); with two, what changed."""

from __future__ import annotations

import time
from pathlib import Path

from cuda_bench.commands.common import (
    asv_options,
    at_least,
    bench_option,
    command_line,
    cupti_option,
    keep_out_of_the_history,
    log,
    no_counts_option,
    no_instructions_option,
    paired_context,
    this_machine,
)
from cuda_bench.compare import gate, instrpass, paired, steps
from cuda_bench.compare.countpass import measure, with_cupti, write
from cuda_bench.foundations import counts
from cuda_bench.foundations.paths import BENCHMARKS, RESULTS, WORK, label
from cuda_bench.foundations.status import INCOMPLETE, OK, worst
from cuda_bench.results import counts_read, instructions_read, records
from cuda_bench.run import asvrun, imports


def add(sub):
    p = sub.add_parser(
        "counts",
        description="the work per call of every case at REV (and REV2), counted, not timed: CUDA "
        "driver and runtime API calls by name (CUPTI's callback API, where cupti-python is "
        "installed in the benchmark environment and a driver is present; else none, and the record "
        "says why), NVRTC calls seen from Python (calls of cuda.bindings.nvrtc functions; those "
        "made from Cython are not seen), Python calls and C calls (sys.monitoring on Python 3.12+, "
        "sys.setprofile before: the record names which), and net memory blocks "
        "(sys.getallocatedblocks). Each case is set up in a worker process of its commit's "
        "environment (built as `compare` builds it), warmed up (the first calls are not counted), "
        "then counted twice over --calls calls of its timed body (a count that differs between the "
        "two is marked unsteady and left out of the diff); per call is the total over the calls. "
        "Writes .asv/counts/REV/counts.json and counts.md, appends a record per commit to "
        "results/<machine>/counts.jsonl (not without a GPU), and with two revisions prints what "
        "changed, case by case (\"`EventCreate('core')`: +1 cuCtxGetCurrent, +14 Python calls, +2 "
        'net blocks"). Then the instruction pass (where valgrind is found: $CUDA_BENCH_VALGRIND or '
        "PATH): each case's instructions per call, counted by callgrind in the calling thread in "
        "five memory layouts, a long run less a short one so that set-up and warm-up cancel: "
        "REV/instructions.json, instructions.md and instructions-functions.json (each case's "
        "functions per call), results/<machine>/instructions.jsonl; with two revisions each case "
        "whose count moved beyond its spread, and the functions whose counts changed most. With "
        "--out, each case's two counted runs are kept as callgrind files in REV/callgrind "
        "(kcachegrind, callgrind_annotate). Exit status 2 when a case could not be counted.",
    )
    p.add_argument("rev", help="commit, tag or branch")
    p.add_argument("rev2", nargs="?", help="a second one: what changed from REV to REV2 is printed")
    asv_options(p, results_dir=False)
    bench_option(p)
    p.add_argument(
        "--calls",
        type=at_least(1),
        default=counts.CALLS,
        help="calls counted per case and run, in whole bodies (default %(default)s)",
    )
    p.add_argument(
        "--slow-calls",
        type=at_least(1),
        default=counts.SLOW_CALLS,
        help="for the operations the suite times one call per body (tens of microseconds or more, "
        "compilation) (default %(default)s)",
    )
    cupti_option(p)
    no_counts_option(p, help="skip the counting pass: the instructions alone")
    no_instructions_option(p)
    p.add_argument(
        "--no-write",
        action="store_true",
        help="do not append to results/<machine>/counts.jsonl, imports.jsonl and "
        "instructions.jsonl",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="where REV/counts.json, REV/counts.md, the instructions and the worker logs go, and "
        "the callgrind files are kept (default .asv/counts, without the callgrind files)",
    )


def main(args, argv):
    name, info = this_machine(args)
    keep_out_of_the_history(args, info, "the counts are")
    conf, repo = paired_context(args)
    names = gate.case_names(args.bench, BENCHMARKS)
    revs = [args.rev, *([args.rev2] if args.rev2 else [])]
    out = Path(args.out or WORK / "counts").resolve()
    start = time.monotonic()
    envs = gate.environments(
        repo,
        revs,
        asvrun.bindings_of(conf),
        asvrun.requirements(conf),
        asvrun.system_site_of(conf),
        out / "logs",
        log,
    )
    built = round(time.monotonic() - start, 1)
    sides = with_cupti(
        [
            paired.Side(f"rev{i}", rev, envs[rev]["commit"], envs[rev]["python"], record=envs[rev])
            for i, rev in enumerate(revs)
        ],
        args.cupti,
        WORK / "cupti",
    )
    status = OK
    if not args.no_counts:
        status = work_counts(args, argv, sides, names, out, built, info, name)
    if not args.no_instructions:
        status = worst([status, instruction_counts(args, argv, sides, names, out, info, name)])
    return status


def work_counts(args, argv, sides, names, out, built, info, name):
    """The counting pass of ``cuda-bench counts``: each side's table and record, the diff of two."""
    log(f"counts: {len(names)} cases at {', '.join(s.rev for s in sides)}, one worker per commit")
    found = measure(
        sides,
        names,
        log_dir=out / "logs",
        progress=log,
        calls=args.calls,
        slow_calls=args.slow_calls,
        command=command_line(argv),
        machine_info=info,
        build_seconds=built,
    )
    status = OK
    for side in sides:
        record = found[side.name]
        print(write(out / label(side.rev), record))
        log(
            f"counts at {side.rev}: {len(record['cases'])} counted, {len(record['skipped'])} "
            f"skipped, {len(record['errors'])} not counted -> "
            f"{out / label(side.rev) / 'counts.json'}"
        )
        if record["errors"]:
            status = INCOMPLETE
        if not args.no_write and not kept(name, "counts", record, out / label(side.rev)):
            status = INCOMPLETE
    status = worst([status, keep_imports(sides, name, out, args, argv, info)])
    if len(sides) == 2:
        text = counts_read.diff_markdown(found[sides[0].name], found[sides[1].name])
        said = [imports.record_path(out / label(s.rev)) for s in sides]
        if all(p.exists() for p in said):
            base, head = (records.json.loads(p.read_text()) for p in said)
            text += "\n".join(imports.markdown(base, head)) + "\n"
        (out / f"{label(sides[0].rev)}-{label(sides[1].rev)}.md").write_text(text)
        print(text)
    return status


def kept(name, kind, record, folder):
    """``record`` appended to results/<machine>/, or a line saying where it is instead: whether it
    was kept."""
    return steps.record_or_say(
        RESULTS / name, kind, record, folder / f"{kind}.json", f"{kind} at {record['rev']}"
    )


def instruction_counts(args, argv, sides, names, out, info, name):
    """The instruction pass of ``cuda-bench counts``: each side's table, functions and record, the
    diff of two with the functions whose counts changed most; where valgrind is not found, a line
    that says so (exit 0)."""
    try:
        found = instrpass.measure(
            sides,
            names,
            out=out,
            keep=bool(args.out),
            progress=log,
            command=command_line(argv),
            machine_info=info,
        )
    except instrpass.InstructionsError as exc:
        log(f"instructions not counted: {exc}")
        return OK
    except instrpass.InstructionsCut as cut:  # what was counted is written, never recorded
        written(sides, cut.found, out)
        raise
    status = OK
    for side, table in zip(sides, written(sides, found, out)):
        record = found[side.name][0]
        print(table)
        if record["errors"]:
            status = INCOMPLETE
        if not args.no_write and not kept(name, "instructions", record, out / label(side.rev)):
            status = INCOMPLETE
    if len(sides) == 2:
        (base, base_functions), (head, head_functions) = (found[s.name] for s in sides)
        text = instructions_read.diff_markdown(base, head, base_functions, head_functions)
        (out / f"{label(sides[0].rev)}-{label(sides[1].rev)}-instructions.md").write_text(text)
        print(text)
    return status


def written(sides, found, out):
    """Each side's instruction record, table and functions (``found``: {side name: (record,
    functions)}) written under ``out``, every side before a word is said (a closed log loses no
    record), then said: the tables."""
    tables = [instrpass.write(out / label(side.rev), *found[side.name]) for side in sides]
    for side in sides:
        where = out / label(side.rev) / "instructions.json"
        log(instrpass.said(found[side.name][0]) + f" -> {where}")
    return tables


def keep_imports(sides, name, out, args, argv, info):
    """What ``import cuda.core`` imports at each revision (``cuda_bench.run.imports``), written
    beside its counts (REV/imports.json) and, unless --no-write, appended to
    results/<machine>/imports.jsonl: the exit status, INCOMPLETE where a revision could not be
    measured or recorded."""
    status = OK
    found = imports.measure_sides(
        sides, command=command_line(argv), machine_info=info, progress=log
    )
    for side in sides:
        record = found[side.name]
        if "error" in record:
            log(f"imports at {side.rev}: not measured ({record['error']})")
            status = INCOMPLETE
            continue
        path = imports.record_path(out / label(side.rev))
        path.write_text(records.json.dumps(record) + "\n")
        if not args.no_write and not kept(name, "imports", record, path.parent):
            status = INCOMPLETE
    return status
