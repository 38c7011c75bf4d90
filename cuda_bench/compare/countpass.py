"""The counting pass: every case's work per call (``cuda_bench.foundations.counts``, what each
worker runs) counted in worker processes of built environments, and its record written (counts.json,
counts.md) and kept (``results/<machine>/counts.jsonl``). ``cuda-bench counts`` runs it on the
commits it is given, ``cuda-bench compare`` on both builds after the timing, ``cuda-bench run`` on
each commit it measured."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from cuda_bench.compare import gate, paired, steps, summaries
from cuda_bench.foundations import counts, machine, process
from cuda_bench.foundations.paths import BENCHMARKS, WORK, label
from cuda_bench.foundations.status import INCOMPLETE, OK, worst
from cuda_bench.results import counts_read
from cuda_bench.run import asvrun, imports

WARMUP = (
    "the case's setup (its body once), then one uncounted run of the counted size: the first "
    "calls are left out"
)


def say(message):
    """A line on stderr, as the commands say theirs: the pass's progress where no other is given."""
    print(f"bench: {message}", file=sys.stderr, flush=True)


def wheels_of(paths):
    """The wheel files ``paths`` name (a folder: every wheel in it)."""
    found = []
    for path in map(Path, paths):
        found += sorted(path.glob("*.whl")) if path.is_dir() else [path]
    missing = [str(p) for p in found if not p.is_file()]
    if missing or not found:
        named = ", ".join(missing) or ", ".join(map(str, paths))
        raise gate.CompareError(f"--cupti: no wheel at {named}")
    return found


def with_cupti(sides, wheels, folder, progress=say):
    """``sides`` whose counting workers also see ``wheels`` (cupti-python, libcupti's wheel): each
    environment's Python installs them with ``--no-deps --no-index`` into a folder of their own
    (once per environment and set of wheels), put on the workers' PYTHONPATH. No wheels: ``sides``
    as they are."""
    if not wheels:
        return list(sides)
    files = wheels_of(wheels)
    out = []
    for side in sides:
        key = hashlib.sha256(json.dumps([side.python, *map(str, files)]).encode()).hexdigest()[:12]
        target = Path(folder) / key
        if not (target / ".installed").exists():
            progress(f"counts: {', '.join(f.name for f in files)} -> {target} (for {side.python})")
            done = subprocess.run(
                [
                    side.python,
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "--no-index",
                    "--upgrade",
                    "--target",
                    str(target),
                    *map(str, files),
                ],
                capture_output=True,
                text=True,
            )
            if done.returncode:
                said = (done.stderr or done.stdout).strip().splitlines()[-1:]
                raise gate.CompareError(
                    f"--cupti: {side.python} could not install {', '.join(map(str, files))}: {said}"
                )
            (target / ".installed").write_text(json.dumps([f.name for f in files]) + "\n")
        paths = [str(target), *filter(None, [side.env.get("PYTHONPATH")])]
        env = {**side.env, "PYTHONPATH": os.pathsep.join(paths)}
        out.append(dataclasses.replace(side, env=env))
    return out


def _mechanism(hello):
    python = (hello.get("versions") or {}).get("python", "0.0")
    newer = tuple(int(x) for x in python.split(".")[:2]) >= (3, 12)
    return "sys.monitoring" if newer else "sys.setprofile"


def count_side(
    side,
    names,
    *,
    calls=counts.CALLS,
    slow_calls=counts.SLOW_CALLS,
    benchmark_dir=BENCHMARKS,
    log_dir,
    progress=None,
    timeout=600,
    command=None,
    machine_info=None,
    build_seconds=None,
):
    """Every case of ``names`` counted in worker processes of ``side`` (a paired.Side; a worker that
    dies is replaced for the cases after it): the record of type "counts"."""
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
                cases.append({"name": name} | {k: answer[k] for k in CASE_FIELDS})
            if (i + 1) % 25 == 0:
                progress(f"counts at {side.rev}: {i + 1}/{len(names)} cases")
    finally:
        if worker is not None:
            worker.close()
    return counts_record(side, cases, skipped, errors, answers, hello, calls, slow_calls, start) | {
        "build_seconds": build_seconds,
        "command": command,
        "machine": machine_info or {},
    }


#: what a counts record keeps of a worker's answer for each case (``records.COUNTS_CASE``)
CASE_FIELDS = ("calls", "cuda", "nvrtc", "python_calls", "c_calls", "net_blocks", "unsteady")


def counts_record(side, cases, skipped, errors, answers, hello, calls, slow_calls, start):
    """The record of type "counts" of one side's counted ``cases`` (``answers``: the workers'
    answers they come from; ``hello``: a worker's hello)."""
    first = answers[0] if answers else {}
    whys = list(dict.fromkeys(a["cuda_why"] for a in answers))
    return {
        "commit": side.commit,
        "rev": side.rev,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(time.monotonic() - start, 1),
        "build_seconds": None,
        "command": None,
        "machine": {},
        "host": machine.host(),
        "versions": hello.get("versions") or {},
        "settings": {
            "calls": calls,
            "slow_calls": slow_calls,
            "runs": counts.RUNS,
            "warmup": WARMUP,
        },
        "mechanism": first.get("mechanism") or _mechanism(hello),
        "cuda_counted": any(c["cuda"] is not None for c in cases),
        "cuda_why": "; ".join(whys) if whys else "no case was counted",
        "nvrtc_why": first.get("nvrtc_why") or counts.NVRTC_WHY,
        "cases": cases,
        "skipped": skipped,
        "errors": errors,
    }


#: set when the command is interrupted: every side stops before its next case
STOP = threading.Event()


def measure(sides, names, *, log_dir, progress=None, **options):
    """Each side (paired.Side) counted at once, one worker process per commit: {side name: record}.
    An interrupt stops every side before its next case (its worker closed) instead of waiting for
    the pass to end."""

    def one(side):
        return count_side(side, names, log_dir=log_dir, progress=progress, **options)

    found = process.map_stoppable(STOP, one, sides, len(sides))
    return {side.name: record for side, record in zip(sides, found, strict=True)}


def count_parallel(sides, names, *, jobs=None, log_dir, progress=say, **options):
    """Every side (paired.Side) counted at once, ``jobs`` worker processes at a time (default:
    every core but one): {side name: record}, each as :func:`count_side` makes it. Each side's
    cases are cut into the same consecutive runs, so a case is counted after the same cases in every
    commit's process; the record's ``seconds`` is the wall time from the first run's start to its
    side's last run's end, and ``together`` how many commits were counted at once."""
    jobs = jobs or max(1, len(machine.cores()) - 1)
    per_side = max(1, min(len(names), -(-2 * jobs // max(1, len(sides)))))
    size = -(-len(names) // per_side)
    chunks = [names[i : i + size] for i in range(0, len(names), size)]
    tasks = [(side, i, chunk) for side in sides for i, chunk in enumerate(chunks)]
    progress(
        f"counts: {len(sides)} commit(s) x {len(names)} cases in {len(tasks)} runs of up to "
        f"{size}, {min(jobs, len(tasks))} at a time"
    )
    start = time.monotonic()
    ended = {}

    def one(task):
        side, i, chunk = task
        part = count_side(
            side,
            chunk,
            log_dir=Path(log_dir) / f"part{i:02d}",
            progress=lambda m: None,
            **options,
        )
        ended[(side.name, i)] = time.monotonic()
        return part

    parts = process.map_stoppable(STOP, one, tasks, min(jobs, len(tasks)))
    out = {}
    for side in sides:
        mine = [p for (s, _, _), p in zip(tasks, parts) if s is side]
        out[side.name] = merged(mine, names) | {
            "seconds": round(max(ended[(side.name, i)] for i in range(len(chunks))) - start, 1),
            "together": len(sides),
        }
    return out


def merged(parts, names):
    """One counts record of a commit from the records of its runs (:func:`count_parallel`): their
    cases in ``names``' order, skips and errors together, CUDA counted where any run counted it."""
    first = next((p for p in parts if p["cases"]), parts[0])
    order = {name: i for i, name in enumerate(names)}
    whys = list(dict.fromkeys(w for p in parts if p["cases"] for w in p["cuda_why"].split("; ")))
    return first | {
        "cases": sorted((c for p in parts for c in p["cases"]), key=lambda c: order[c["name"]]),
        "skipped": {k: v for p in parts for k, v in p["skipped"].items()},
        "errors": {k: v for p in parts for k, v in p["errors"].items()},
        "cuda_counted": any(p["cuda_counted"] for p in parts),
        "cuda_why": "; ".join(whys) if whys else "no case was counted",
        "versions": next((p["versions"] for p in parts if p["versions"]), {}),
    }


def write(out_dir, record):
    """counts.json and counts.md (the table) into ``out_dir``; the table."""
    return summaries.write_files(out_dir, record, "counts", counts_read.markdown)


def record_commits(
    repo,
    commits,
    *,
    conf,
    machine_name,
    info,
    results_dir,
    cupti=(),
    command=None,
    progress=say,
    jobs=None,
):
    """The counting pass of ``cuda-bench run`` and ``window``: each of ``commits`` counted in its
    own environment (the ones the paired steps use), ``jobs`` worker processes at once
    (:func:`count_parallel`), and recorded in ``results_dir/<machine>/counts.jsonl``. Its exit
    status: INCOMPLETE when a commit could not be counted or recorded, else OK."""
    out = WORK / "counts"
    try:
        envs = gate.environments(
            repo,
            list(commits),
            asvrun.bindings_of(conf),
            asvrun.requirements(conf),
            asvrun.system_site_of(conf),
            out / "logs",
            progress,
        )
        sides = with_cupti(
            [
                paired.Side(f"rev{i}", c, envs[c]["commit"], envs[c]["python"], record=envs[c])
                for i, c in enumerate(commits)
            ],
            cupti,
            WORK / "cupti",
            progress,
        )
    except steps.MEASURE_ERRORS as exc:
        progress(f"counts not made: {exc}")
        return INCOMPLETE
    status = OK
    names = gate.case_names([], BENCHMARKS)
    counted = count_parallel(
        sides,
        names,
        jobs=jobs,
        log_dir=out / "logs",
        progress=progress,
        command=command,
        machine_info=info,
    )
    for side in sides:
        record = counted[side.name]
        here = out / label(side.rev[:12])
        write(here, record)
        if not steps.record_or_say(
            Path(results_dir) / machine_name,
            "counts",
            record,
            here / "counts.json",
            f"counts at {side.rev[:9]}",
        ):
            status = INCOMPLETE
        elif record["errors"]:
            status = INCOMPLETE
        progress(
            f"counts at {side.rev[:9]}: {len(record['cases'])} counted, "
            f"{len(record['skipped'])} skipped, {len(record['errors'])} not counted in "
            f"{record['seconds']:g} s"
        )
    imported = keep_imports(sides, Path(results_dir) / machine_name, out, command, info, progress)
    return worst([status, imported])


def keep_imports(sides, folder, out, command, info, progress):
    """What ``import cuda.core`` imports at each side's commit (``cuda_bench.run.imports``), kept in
    ``folder``'s imports.jsonl (and out/REV/imports.json): the exit status, INCOMPLETE where a
    commit could not be measured or recorded."""
    found = imports.measure_sides(sides, command=command, machine_info=info, progress=progress)
    status = OK
    for side in sides:
        record = found[side.name]
        if "error" in record:
            progress(f"imports at {side.rev[:9]}: not measured ({record['error']})")
            status = INCOMPLETE
            continue
        here = imports.record_path(out / label(side.rev[:12]))
        here.parent.mkdir(parents=True, exist_ok=True)
        here.write_text(json.dumps(record) + "\n")
        if not steps.record_or_say(folder, "imports", record, here, f"imports at {side.rev[:9]}"):
            status = INCOMPLETE
    return status
