"""``cuda-bench counts REV [REV2]``: the work per call of every case (CUDA API calls by name, NVRTC calls, Python
calls, C calls, net memory blocks) at one or two commits, counted in a pass of its own (``cuda_bench.counts``); with
two, what changed. :func:`measure` is also the counting pass of ``cuda-bench compare``."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cuda_bench import asvrun, compare, counts, machine, paired, records
from cuda_bench.commands.common import (
    asv_options,
    at_least,
    command_line,
    keep_out_of_the_history,
    log,
    paired_context,
    regex,
    this_machine,
)
from cuda_bench.paths import BENCHMARKS, RESULTS, WORK, label
from cuda_bench.status import INCOMPLETE, OK

WARMUP = ("the case's setup (its body once), then one uncounted run of the counted size: the first calls are "
          "left out")


def add(sub):
    p = sub.add_parser(
        "counts", description="the work per call of every case at REV (and REV2), counted, not timed: CUDA driver "
        "and runtime API calls by name (CUPTI's callback API, where cupti-python is installed in the benchmark "
        "environment and a driver is present; else none, and the record says why), NVRTC calls seen from Python "
        "(calls of cuda.bindings.nvrtc functions; those made from Cython are not seen), Python calls and C calls "
        "(sys.monitoring on Python 3.12+, sys.setprofile before: the record names which), and net memory blocks "
        "(sys.getallocatedblocks). Each case is set up in a worker process of its commit's environment (built as "
        "`compare` builds it), warmed up (the first calls are not counted), then counted twice over --calls "
        "calls of its timed body (a count that differs between the two is marked unsteady and left out of the "
        "diff); per call is the total over the calls. Writes .asv/counts/REV/counts.json and counts.md, appends a "
        "record per commit to results/<machine>/counts.jsonl (not without a GPU), and with two revisions prints "
        "what changed, case by case (\"`EventCreate('core')`: +1 cuCtxGetCurrent, +14 Python calls, +2 net "
        "blocks\"). Exit status 2 when a case could not be counted.")
    p.add_argument("rev", help="commit, tag or branch")
    p.add_argument("rev2", nargs="?", help="a second one: what changed from REV to REV2 is printed")
    asv_options(p, results_dir=False)
    p.add_argument("--bench", "-b", action="append", default=[], metavar="REGEX", type=regex,
                   help="only the cases whose name matches (repeatable, as asv's -b)")
    p.add_argument("--calls", type=at_least(1), default=counts.CALLS,
                   help="calls counted per case and run, in whole bodies (default %(default)s)")
    p.add_argument("--slow-calls", type=at_least(1), default=counts.SLOW_CALLS,
                   help="for the operations the suite times one call per body (tens of microseconds or more, "
                   "compilation) (default %(default)s)")
    cupti_option(p)
    p.add_argument("--no-write", action="store_true", help="do not append to results/<machine>/counts.jsonl")
    p.add_argument("--out", metavar="DIR", help="where REV/counts.json, REV/counts.md and the worker logs go "
                   "(default .asv/counts)")


def cupti_option(parser):
    parser.add_argument("--cupti", action="append", default=[], metavar="WHEEL", type=Path,
                        help="a wheel (or a folder of wheels) to count CUDA calls with: cupti-python and the "
                        "nvidia-cuda-cupti that carries libcupti (e.g. `pip download --no-deps cupti-python==13.0.1 "
                        "nvidia-cuda-cupti==13.0.*`); installed with --no-deps, from these files only, into a folder "
                        "of their own per environment that only the counting workers see (the timed environments "
                        "stay as built, and no newer cuda-bindings comes with them). Repeatable")


def wheels_of(paths):
    """The wheel files ``paths`` name (a folder: every wheel in it)."""
    found = []
    for path in map(Path, paths):
        found += sorted(path.glob("*.whl")) if path.is_dir() else [path]
    missing = [str(p) for p in found if not p.is_file()]
    if missing or not found:
        raise compare.CompareError(f"--cupti: no wheel at {', '.join(missing) or ', '.join(map(str, paths))}")
    return found


def with_cupti(sides, wheels, folder, progress=log):
    """``sides`` whose counting workers also see ``wheels`` (cupti-python, libcupti's wheel): each environment's
    Python installs them with ``--no-deps --no-index`` into a folder of their own (once per environment and set
    of wheels), put on the workers' PYTHONPATH. No wheels: ``sides`` as they are."""
    if not wheels:
        return list(sides)
    files = wheels_of(wheels)
    out = []
    for side in sides:
        key = hashlib.sha256(json.dumps([side.python, *map(str, files)]).encode()).hexdigest()[:12]
        target = Path(folder) / key
        if not (target / ".installed").exists():
            progress(f"counts: {', '.join(f.name for f in files)} -> {target} (for {side.python})")
            done = subprocess.run([side.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                   "--no-deps", "--no-index", "--upgrade", "--target", str(target), *map(str, files)],
                                  capture_output=True, text=True)
            if done.returncode:
                raise compare.CompareError(f"--cupti: {side.python} could not install {', '.join(map(str, files))}: "
                                           f"{(done.stderr or done.stdout).strip().splitlines()[-1:]}")
            (target / ".installed").write_text(json.dumps([f.name for f in files]) + "\n")
        paths = [str(target), *filter(None, [side.env.get("PYTHONPATH")])]
        out.append(dataclasses.replace(side, env={**side.env, "PYTHONPATH": os.pathsep.join(paths)}))
    return out


def _mechanism(hello):
    python = (hello.get("versions") or {}).get("python", "0.0")
    return "sys.monitoring" if tuple(int(x) for x in python.split(".")[:2]) >= (3, 12) else "sys.setprofile"


def count_side(side, names, *, calls=counts.CALLS, slow_calls=counts.SLOW_CALLS, benchmark_dir=BENCHMARKS,
               log_dir, progress=None, timeout=600, command=None, machine_info=None, build_seconds=None):
    """Every case of ``names`` counted in worker processes of ``side`` (a paired.Side; a worker that dies is
    replaced for the cases after it): the record of type "counts"."""
    progress = progress or (lambda m: print(m, file=sys.stderr, flush=True))
    settings = paired.Settings(benchmark_dir=Path(benchmark_dir), layouts="random", timeout=timeout)
    log_file = Path(log_dir) / f"counts-{label(side.rev)}.log"
    start = time.monotonic()
    cases, skipped, errors, hello, worker, answers = [], {}, {}, {}, None, []
    try:
        for i, name in enumerate(names):
            if STOP.is_set():
                break
            try:
                if worker is None:
                    worker = paired.Worker(side, None, settings, log_file)
                    hello = hello or worker.hello
                answer = worker.ask(op="count", case=name, calls=calls, slow_calls=slow_calls)
            except paired.WorkerError as exc:
                errors[name] = str(exc)
                if worker is not None:
                    worker.close()
                worker = None
                continue
            if "skip" in answer:
                skipped[name] = answer["skip"]
            elif "ok" not in answer:
                errors[name] = answer.get("error") or json.dumps(answer)
            else:
                answers.append(answer)
                cases.append({"name": name, "calls": answer["calls"], "cuda": answer["cuda"],
                              "nvrtc": answer["nvrtc"], "python_calls": answer["python_calls"],
                              "c_calls": answer["c_calls"], "net_blocks": answer["net_blocks"],
                              "unsteady": answer["unsteady"]})
            if (i + 1) % 25 == 0:
                progress(f"counts at {side.rev}: {i + 1}/{len(names)} cases")
    finally:
        if worker is not None:
            worker.close()
    first = answers[0] if answers else {}
    whys = list(dict.fromkeys(a["cuda_why"] for a in answers))
    return {
        "commit": side.commit, "rev": side.rev, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(time.monotonic() - start, 1), "build_seconds": build_seconds, "command": command,
        "machine": machine_info or {}, "host": machine.host(), "versions": hello.get("versions") or {},
        "settings": {"calls": calls, "slow_calls": slow_calls, "runs": counts.RUNS, "warmup": WARMUP},
        "mechanism": first.get("mechanism") or _mechanism(hello),
        "cuda_counted": any(c["cuda"] is not None for c in cases),
        "cuda_why": "; ".join(whys) if whys else "no case was counted",
        "nvrtc_why": first.get("nvrtc_why") or counts.NVRTC_WHY,
        "cases": cases, "skipped": skipped, "errors": errors,
    }


#: set when the command is interrupted: every side stops before its next case
STOP = threading.Event()


def measure(sides, names, *, log_dir, progress=None, **options):
    """Each side (paired.Side) counted at once, one worker process per commit: {side name: record}. An interrupt
    stops every side before its next case (its worker closed) instead of waiting for the pass to end."""
    pool = ThreadPoolExecutor(len(sides))
    try:
        found = pool.map(lambda side: count_side(side, names, log_dir=log_dir, progress=progress, **options), sides)
        return {side.name: record for side, record in zip(sides, found, strict=True)}
    except BaseException:
        STOP.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        STOP.clear()


def write(out_dir, record):
    """counts.json and counts.md (the table) into ``out_dir``; the table."""
    return compare.write_files(out_dir, record, "counts", counts.markdown)


def record_commits(repo, commits, *, conf, machine_name, info, results_dir, cupti=(), command=None):
    """The counting pass of ``cuda-bench run``: each of ``commits`` counted in its own environment (the ones the
    paired steps use) and recorded in ``results_dir/<machine>/counts.jsonl``. Its exit status: INCOMPLETE when a
    commit could not be counted or recorded, else OK."""
    from cuda_bench import steps

    out = WORK / "counts"
    try:
        envs = compare.environments(repo, list(commits), asvrun.bindings_of(conf), asvrun.requirements(conf),
                                    asvrun.system_site_of(conf), out / "logs", log)
        sides = with_cupti([paired.Side(f"rev{i}", c, envs[c]["commit"], envs[c]["python"], record=envs[c])
                            for i, c in enumerate(commits)], cupti, WORK / "cupti") if cupti else \
            [paired.Side(f"rev{i}", c, envs[c]["commit"], envs[c]["python"], record=envs[c])
             for i, c in enumerate(commits)]
    except steps.MEASURE_ERRORS as exc:
        log(f"counts not made: {exc}")
        return INCOMPLETE
    status = OK
    names = compare.case_names([], BENCHMARKS)
    for side in sides:  # one commit at a time: the counts of one do not wait on the others' builds
        record = count_side(side, names, log_dir=out / "logs", progress=log, command=command, machine_info=info)
        write(out / label(side.rev[:12]), record)
        if not steps.record_or_say(Path(results_dir) / machine_name, "counts", record,
                                   out / label(side.rev[:12]) / "counts.json", f"counts at {side.rev[:9]}"):
            status = INCOMPLETE
        elif record["errors"]:
            status = INCOMPLETE
        log(f"counts at {side.rev[:9]}: {len(record['cases'])} counted, {len(record['skipped'])} skipped, "
            f"{len(record['errors'])} not counted")
    return status


def main(args, argv):
    name, info = this_machine(args)
    keep_out_of_the_history(args, info, "the counts are")
    conf, repo = paired_context(args)
    names = compare.case_names(args.bench, BENCHMARKS)
    revs = [args.rev, *([args.rev2] if args.rev2 else [])]
    out = Path(args.out or WORK / "counts").resolve()
    start = time.monotonic()
    envs = compare.environments(repo, revs, asvrun.bindings_of(conf), asvrun.requirements(conf),
                                asvrun.system_site_of(conf), out / "logs", log)
    built = round(time.monotonic() - start, 1)
    sides = with_cupti([paired.Side(f"rev{i}", rev, envs[rev]["commit"], envs[rev]["python"], record=envs[rev])
                        for i, rev in enumerate(revs)], args.cupti, WORK / "cupti")
    log(f"counts: {len(names)} cases at {', '.join(revs)}, one worker process per commit")
    found = measure(sides, names, log_dir=out / "logs", progress=log, calls=args.calls, slow_calls=args.slow_calls,
                    command=command_line(argv), machine_info=info, build_seconds=built)
    status = OK
    for side in sides:
        record = found[side.name]
        print(write(out / label(side.rev), record))
        log(f"counts at {side.rev}: {len(record['cases'])} counted, {len(record['skipped'])} skipped, "
            f"{len(record['errors'])} not counted -> {out / label(side.rev) / 'counts.json'}")
        if record["errors"]:
            status = INCOMPLETE
        if not args.no_write:
            try:
                records.append(RESULTS / name, "counts", record)
            except (OSError, records.RecordError) as exc:
                log(f"counts at {side.rev}: not recorded in results/{name}/{records.FILES['counts']} ({exc}); "
                    f"its record is in {out / label(side.rev) / 'counts.json'}")
                status = INCOMPLETE
    if len(sides) == 2:
        text = counts.diff_markdown(found[sides[0].name], found[sides[1].name])
        (out / f"{label(revs[0])}-{label(revs[1])}.md").write_text(text)
        print(text)
    return status
