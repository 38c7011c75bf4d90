"""Stage 4, compare: each Python form over its C++ twin, and how such measurements are read.

``cuda-bench over-cpp COMMIT`` times, in one build, each case that has a C++ twin (``names.cpp_id``)
against that twin, sample by sample inside one worker process (:func:`processes`), in fresh
processes; the record (``results/<machine>/over-cpp.jsonl``) gives each case's ratio and difference
with their intervals. On the H200 VM a process runs its Python either in a fast state or about twice
as slowly while its C++ twin slows only ~1.2x, so a ratio is read over the processes in the fast
state (``stats.fast_state``), a run whose twins ran far slower than the machine's fastest recorded
run (the slow state) is left out where another run measured the case, and two runs are compared only
where they timed the same work the same way (:func:`run_kind`, :func:`same_work`). cuda-python's
target (#1580): under 1 µs over C++.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sys
import time
from pathlib import Path

from cuda_bench.compare import comment, gate, paired, summaries
from cuda_bench.foundations import machine, process, stats
from cuda_bench.foundations.names import cpp_id, is_control, split_case
from cuda_bench.foundations.status import INCOMPLETE, OK
from cuda_bench.foundations.suite import cases as suite_cases
from cuda_bench.foundations.suite import twin_ids
from cuda_bench.foundations.text import TARGET_NS, fmt_ns, last_line, times
from cuda_bench.results import records
from cuda_bench.results.overcpp_read import repeat_note, slow_run_note


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


def one_process(index, side, items, settings, log_dir, core, done, make_worker=paired.Worker):
    """Worker process number ``index`` of an over-C++ run, on ``core``: every (case, twin) of
    ``items`` in a shuffled order, each the Python case and its C++ twin timed in turn inside that
    one process."""
    if hasattr(os, "sched_setaffinity") and make_worker is paired.Worker:
        os.sched_setaffinity(0, {core})
    order = list(items)
    random.Random(index).shuffle(order)
    found, worker, hello = {}, None, {}
    try:
        for name, twin in order:
            try:
                if worker is None:
                    worker = make_worker(
                        side, core, settings, Path(log_dir) / f"over-cpp{index:02d}.log"
                    )
                    hello = worker.hello
                found[name] = worker.ask(
                    op="over_cpp",
                    case=name,
                    twin=twin,
                    seconds=settings.seconds,
                    sample_ns=settings.sample_ns,
                    min_groups=settings.min_groups,
                )
            except paired.WorkerError as exc:
                found[name] = {"error": str(exc)}
                if worker is not None:
                    worker.close()
                worker = None
            done(name)
    finally:
        if worker is not None:
            worker.close()
    return found, hello


def processes(side, items, settings, log_dir, progress=None, cores=None):
    """Python over C++ for ``items`` ([(case name, twin id)]) in one build: ``settings.pairs``
    worker processes (fresh, ASLR off by default: ``OVER_CPP_LAYOUTS``; one core each, several at a
    time), each timing every case against its twin sample by sample. {"cases": [stats.over_cpp ...],
    "skipped", "errors", "lost" (:func:`kept`), "seconds", "hello", "cores", "groups": {case: per
    process, its ABBA groups (c1, p1, p2, c2) in ns per call}, "process_cores": the core each
    process ran on}."""
    progress = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    cores = list(cores or paired.default_cores())
    jobs = min(settings.pairs, settings.jobs or len(cores), len(cores))
    total = len(items) * settings.pairs
    progress(
        f"over C++: {len(items)} cases x {settings.pairs} processes, {jobs} at a time; "
        f"{settings.seconds:g} s each (about {total / jobs * (settings.seconds + 0.1) / 60:.1f} "
        "min)"
    )
    start = time.monotonic()
    outcomes = process.in_parallel(
        one_process,
        (side, items, settings, log_dir),
        settings.pairs,
        cores[:jobs],
        total,
        progress,
        "over C++",
    )
    outcomes = paired.failed_as(
        outcomes, "processes", lambda exc: ({n: {"error": str(exc)} for n, _ in items}, {})
    )
    cases, skipped, errors, lost, groups = [], {}, {}, {}, {}
    for name, twin in items:
        every = [found.get(name, {"error": "not measured"}) for found, _ in outcomes]
        answers, error, lost_note = paired.sort_out(
            every, lambda a: "error" in a, lambda a: a["error"], "processes", settings.confidence
        )
        if error:
            errors[name] = error
            continue
        if all("skip" in a for a in answers):
            skipped[name] = answers[0]["skip"]
        elif any("skip" in a for a in answers):
            errors[name] = "processes disagree whether it runs"
        else:
            groups[name] = [a["groups"] for a in answers]
            cases.append(stats.over_cpp(name, twin, groups[name], settings.confidence))
        if lost_note and name not in errors:
            lost[name] = lost_note
    hello = next((h for _, h in outcomes if h), {})
    return {
        "cases": cases,
        "skipped": skipped,
        "errors": errors,
        "lost": lost,
        "seconds": round(time.monotonic() - start, 1),
        "hello": hello,
        "cores": cores[:jobs],
        "groups": groups,
        "process_cores": [h.get("core") for _, h in outcomes],
    }


def items_of(bench, benchmark_dir):
    """(case, its C++ twin's ID) of every case ``bench`` selects that has a twin (any non-control
    case, where the suite does not list its twins): what ``overhead`` times."""
    twins = twin_ids(benchmark_dir)
    items = [
        (name, cpp_id(*split_case(name)))
        for name in gate.case_names(bench, benchmark_dir)
        if not is_control(name)
    ]
    return [(name, twin) for name, twin in items if twins is None or twin in twins]


def stamp_versions(cases, benchmark_dir):
    """Each measured case (a dict with ``name``) gains ``version``, the asv version of its benchmark
    in the suite that timed it: over-C++ ratios are compared across runs only for the same timed
    work (report.same_work)."""
    suite = suite_cases(benchmark_dir)
    for case in cases:
        found = suite.get(case["name"])
        case["version"] = getattr(found.cls, "version", None) if found else None
    return cases


def measure(
    repo,
    rev,
    *,
    bindings,
    requirements=(),
    system_site=None,
    settings=None,
    bench=(),
    log_dir,
    progress=None,
    command=None,
    machine_info=None,
    groups_file=None,
):
    """Python over C++ at ``rev``: every case with a C++ twin against it (:func:`items_of`;
    ``names.cpp_id``), a record for ``over-cpp.jsonl``. With ``groups_file``, every ABBA group the
    record's medians come from is kept there too (:func:`write_groups`)."""
    progress = progress or (lambda m: print(m, file=sys.stderr, flush=True))
    settings = settings or paired.Settings.over_cpp()
    items = items_of(bench, settings.benchmark_dir)
    if not items:
        raise gate.CompareError(
            f"nothing to time over C++: {list(bench)} match no case with a C++ twin"
        )
    start = time.monotonic()
    env = gate.environments(repo, [rev], bindings, requirements, system_site, log_dir, progress)[
        rev
    ]
    built = round(time.monotonic() - start, 1)
    side = paired.Side("head", rev, env["commit"], env["python"], record=env)
    found = processes(side, items, settings, Path(log_dir) / "workers", progress)
    stamp_versions(found["cases"], settings.benchmark_dir)
    record = {
        "kind": "over-cpp",
        "commit": env["commit"],
        "rev": rev,
        "seconds": found["seconds"],
        "build_seconds": built,
        "command": command,
        "machine": machine_info or {},
        "host": machine.host(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": {
            "processes": settings.pairs,
            "seconds_per_case_and_process": settings.seconds,
            "sample_ns": settings.sample_ns,
            "confidence": settings.confidence,
            "cores": found["cores"],
            "layouts": "fixed" if found["hello"].get("aslr_off") else settings.layouts,
            "aslr_off": found["hello"].get("aslr_off"),
            "state": "fast",
        },  # each case's numbers: medians over its fast-state processes (stats)
        "versions": found["hello"].get("versions"),
        "twins": found["hello"].get("twins"),
        "cases": found["cases"],
        "skipped": found["skipped"],
        "errors": found["errors"],
        "lost": found["lost"],
    }
    if groups_file:
        write_groups(groups_file, record, found["groups"], found["process_cores"])
    return record


def write_groups(path, record, groups, process_cores=None):
    """The raw side of an over-C++ record, gzipped JSON: {"commit", "date", "host", "settings",
    "groups": {case: per process, its ABBA groups [c1, p1, p2, c2] in ns per call}, "process_cores":
    the core each process ran on}; ``stats.overhead`` of a case's groups gives the record's numbers
    back. Too large for results/ (about 20 MB gzipped for the whole suite); for questions the
    medians cannot answer, such as whether a ratio follows the cores' speed within a run."""
    data = {k: record.get(k) for k in ("commit", "date", "host", "settings", "twins")} | {
        "groups": groups,
        "process_cores": process_cores,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as f:
        json.dump(data, f)


def write_files(out_dir, data):
    """over-cpp.json and over-cpp.md into ``out_dir``; the Markdown."""
    return summaries.write_files(out_dir, data, "over-cpp", markdown)


def markdown(data, target_ns=TARGET_NS):
    """The over-C++ table of one record: per case the ratio and the difference, each with its
    interval."""
    out = [
        f"### Over C++ at `{data['rev']}` ({data['commit'][:9]})",
        "",
        "Each Python form and its C++ twin timed in turn, sample by sample, in one process; "
        f"{data['settings']['processes']} processes; medians over the processes in the fast state "
        f"(Python within {stats.FAST_WINDOW - 1:.0%} of the "
        f'{comment.ordinal(stats.FAST_ANCHOR + 1)} fastest process\'s: "fast" says how many) with '
        f'{data["settings"]["confidence"]:.0%} intervals; "all processes": the ratio over every '
        f"process. Target (cuda-python #1580): under {fmt_ns(target_ns)} over C++. "
        f"{data['seconds']:.0f} s.",
        "",
        "| case | C++ twin | Python | C++ | ratio | interval | over C++ | interval | fast | all "
        "processes |",
        "|---|---|--:|--:|--:|:-:|--:|:-:|--:|--:|",
    ]
    for c in data["cases"]:
        mark = "" if c["over_ns"] < target_ns else " ⚠"
        every = times(c["all"]["ratio"], 2) if "all" in c else "-"
        out.append(
            f"| `{c['name']}` | `{c['twin']}` | {fmt_ns(c['py_ns'])} | {fmt_ns(c['cpp_ns'])} | "
            f"{times(c['ratio'], 2)} | [{c['low']:.2f}, {c['high']:.2f}] | "
            f"{fmt_ns(c['over_ns'])}{mark} | [{fmt_ns(c['over_low'])}, {fmt_ns(c['over_high'])}] | "
            f"{c.get('fast', '-')}/{c['processes']} | {every} |"
        )
    if data["errors"]:
        out += [
            "",
            "Not measured: "
            + "; ".join(f"`{n}`: {last_line(t)}" for n, t in sorted(data["errors"].items())),
        ]
    if data.get("lost"):
        out += [
            "",
            "Measured without some processes (a worker died or timed out there): "
            + "; ".join(f"`{n}`: {t}" for n, t in sorted(data["lost"].items())),
        ]
    return "\n".join(out) + "\n"


def judge(results_dir, name, data, written):
    """How an over-C++ run just measured reads against the machine's recorded runs: a warning when
    it ran in the slow state (report.slow_run_note), else how it agrees with the commit's earlier
    run nearest the fast state (report.repeat_note)."""
    everything = records.read(Path(results_dir) / name, "over-cpp")
    recorded = [r for r in everything if r["commit"] == data["commit"]]
    mine = recorded if written else [*recorded, data]
    note = slow_run_note(mine, everything)
    if note:
        log(f"over C++: WARNING: {note}")
        return
    repeat = repeat_note(mine, everything)
    if repeat:
        log(f"over C++: {repeat}")


def measure_and_record(
    repo,
    commit,
    *,
    conf,
    machine_name,
    info,
    results_dir,
    settings,
    bench,
    command,
    write=True,
    out=None,
    keep_groups=False,
):
    """Measure ``commit`` over C++ (:func:`measure`), write its table to ``out`` first (the
    measurement is kept whatever happens next), then append the record to the history (``write``),
    then say how it reads against the machine's earlier runs (:func:`judge`). The exit status:
    INCOMPLETE when not measured, not recorded, or measured without some cases; else OK."""
    from cuda_bench.compare import steps
    from cuda_bench.run import asvrun

    out = Path(out or asvrun.WORK / "over-cpp" / commit[:12]).resolve()
    try:
        if not items_of(bench, settings.benchmark_dir):
            log(f"over C++: nothing to time ({list(bench)} match no case with a C++ twin)")
            return OK, None
    except gate.CompareError:  # -b matches no case at all
        log(f"over C++: nothing to time ({list(bench)} match no case)")
        return OK, None
    try:
        data = measure(
            repo,
            commit,
            bindings=asvrun.bindings_of(conf),
            requirements=asvrun.requirements(conf),
            system_site=asvrun.system_site_of(conf),
            settings=settings,
            bench=bench,
            log_dir=out / "logs",
            progress=log,
            command=command,
            machine_info=info,
            groups_file=out / "groups.json.gz" if keep_groups else None,
        )
    except steps.MEASURE_ERRORS as exc:
        log(f"over C++ at {commit[:9]} not measured: {exc}")
        return INCOMPLETE, None
    try:
        print(write_files(out, data))
        kept_at = out / "over-cpp.json"
    except OSError as exc:
        log(f"over C++ at {commit[:9]}: its table could not be written to {out} ({exc})")
        kept_at = "the line below"
    recorded = False
    if write:
        recorded = steps.record_or_say(
            Path(results_dir) / machine_name, "over-cpp", data, kept_at, f"over C++ at {commit[:9]}"
        )
        if not recorded:
            if kept_at == "the line below":
                print(json.dumps(records.stamped(data, "over-cpp")), flush=True)
            return INCOMPLETE, data
        where = Path(results_dir) / machine_name / records.FILES["over-cpp"]
        log(f"over C++ at {commit[:9]}: {len(data['cases'])} cases -> {where}")
    judge(results_dir, machine_name, data, written=recorded)
    return (INCOMPLETE if summaries.incomplete(data) else OK), data
