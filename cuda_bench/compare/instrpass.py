"""The instruction pass: every case's instructions per call
(``cuda_bench.foundations.instructions``) counted in worker processes run under valgrind's
callgrind, many at once, and its record written (instructions.json, instructions.md, the functions
of each case) and kept (``results/<machine>/instructions.jsonl``). ``cuda-bench counts`` runs it
after the counting pass, ``cuda-bench compare`` after the timing, ``cuda-bench run`` and ``window``
on each commit they measured; ``--no-instructions`` skips it, and a machine without valgrind says
why and goes on.

Each case is counted in :data:`LAYOUTS` processes (a compilation in one: :func:`takes_layouts`),
each started with an environment of another size (:data:`PADS`): that moves where the interpreter's
objects lie, and with them how often its caches collide and whether a buffer grows in place, which
moves some calls' counts by up to 2 % (valgrind places memory the same way in every run, ASLR or
not, so one process would read one layout every time). The case's value is the median of the
layouts', its spread their range.

A line every 15 s says how many case-layouts are counted and the slowest case so far, and each
case's entry says the seconds its counts took. An interrupted pass raises :class:`InstructionsCut`
with the records of what it counted, marked ``"cut"``."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from cuda_bench.build import wheels
from cuda_bench.compare import gate, paired, steps, summaries
from cuda_bench.foundations import callgrind, instructions, machine, process
from cuda_bench.foundations.paths import BENCHMARKS, WORK, label
from cuda_bench.foundations.status import INCOMPLETE, OK
from cuda_bench.results import counts_read, instructions_read
from cuda_bench.run import asvrun

LAYOUTS = 5
#: the processes each commit's cases are dealt into, per layout, whatever the commits counted
#: together and the cores: a case's count depends on what ran before it in its process (a cache
#: filled, a table grown: on the H100, CuPy's calls moved by 17 instructions and more between a
#: pass of one commit in 6 processes and one of two commits in 3 each), so a case runs after the
#: same cases in every pass (of the same case list: a -b selection or a case added to the suite
#: deals them anew). 6 x 5 layouts: two processes per core of a 16-core box for one commit
PARTS = 6
#: the size of the environment variable that gives each layout's process its own layout
PADS = (0, 1021, 2053, 3079, 4099)
PAD_VARIABLE = "CUDA_BENCH_LAYOUT_PAD"
#: set when the command is interrupted: every worker stops before its next case
STOP = threading.Event()
#: the seconds a worker's death waits for :data:`STOP`: the interrupt that reaches the command
#: reaches its workers too, and one that dies of it was interrupted, not failed (a worker that dies
#: of itself costs its part this second)
INTERRUPT_GRACE = 1.0


class InstructionsError(RuntimeError):
    """The pass cannot run here (no valgrind): the line says why."""


class InstructionsCut(KeyboardInterrupt):
    """The pass was interrupted: ``found`` holds what :func:`measure` returns, of the cases counted
    in every layout they take before the interrupt (each record marked ``"cut"``), for the caller
    to write where it was asked to (never into the history) before it stops."""

    def __init__(self, found):
        super().__init__("the instruction pass was interrupted")
        self.found = found


def takes_layouts(name):
    """Whether the case ``name`` is counted in every layout: a compilation
    (``instructions.ONE_LAYOUT``) in the first alone."""
    return name.split(".")[1] not in instructions.ONE_LAYOUT


def parts_of(names, parts=PARTS):
    """``names`` dealt into ``parts`` lists in turn (0, k, 2k, ... to the first): each process gets
    cases of every module, so the slow ones (compilation) do not wait in one; the same cases in the
    same order at every commit and in every pass (:data:`PARTS`)."""
    parts = max(1, min(parts, len(names)))
    return [names[i::parts] for i in range(parts)]


def tasks_of(sides, names):
    """The pass's processes, (side, layout, part number, its cases) each: every side's cases dealt
    alike (:func:`parts_of`), whatever the other sides."""
    return [
        (side, layout, i, part)
        for side in sides
        for i, part in enumerate(parts_of(names))
        for layout in range(LAYOUTS)
    ]


def file_stem(name):
    """A case's callgrind files' name: ``LaunchConfigCreate_core``."""
    return label(counts_read.case_label(name))


def _one_layout(answer, keep, stem):
    """One layout's count of a case from the worker's ``answer``: {"value", "spread", "functions",
    "calls", "warmup", "repeats", "kept"}; its dumps read and removed, the median repeat's two runs
    of the body kept as ``keep/stem.{short,long}.callgrind.out`` (``keep``: a folder, or None;
    ``kept``: their paths)."""
    runs, kept = answer["runs"], {}
    try:
        dumps = {r["file"]: callgrind.read(r["file"]) for r in runs}
        value, spread, _, middle = instructions.per_call(
            runs, {f: d.total for f, d in dumps.items()}
        )
        pick = instructions.median_runs(runs, middle)
        # the functions of more than a ten-thousandth of the call (a compile runs thousands)
        functions = instructions.functions_per_call(pick, dumps, max(0.5, abs(value) * 1e-4))
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for which, run in pick.items():
                kept[which] = keep / f"{stem}.{which}.callgrind.out"
                shutil.copyfile(run["file"], kept[which])
    finally:
        for run in runs:
            Path(run["file"]).unlink(missing_ok=True)
    calls = [r["calls"] for r in runs if r["body"]]
    return {
        "value": value,
        "spread": spread,
        "functions": functions,
        "calls": max(calls) - min(calls),
        "warmup": answer["warmup"] * answer["unroll"],
        "repeats": len({r["repeat"] for r in runs}),
        "kept": kept,
    }


def count_part(side, names, *, valgrind, layout, logs, keep=None, name_functions=False,
               settings=None, found=None, done=None, starting=None):  # fmt: skip
    """The cases ``names`` counted in worker processes of ``side`` under callgrind, in layout
    ``layout`` (a worker that dies is replaced for the cases after it): {"cases": {name: one
    layout's count}, "skipped", "errors", "interrupted" (the cases whose worker died of the
    interrupt), "hello", "names"}, filled into ``found`` as each case
    ends (an interrupted pass keeps what was counted). ``keep``: where each case's two runs are kept
    (``<case>.<layout>``). ``starting(name)`` and ``done(name, seconds)``: told as each case starts
    and ends. A compilation is counted in layout 0 alone (:func:`takes_layouts`)."""
    dumps = Path(tempfile.mkdtemp(prefix="callgrind-"))  # one length for every side and run
    template = str(dumps / "callgrind.out.%p")
    settings = dataclasses.replace(
        settings or paired.Settings(benchmark_dir=BENCHMARKS),
        layouts="fixed",
        wrapper=tuple(callgrind.command(valgrind, template)),
    )
    env = {callgrind.OUT_VARIABLE: template, PAD_VARIABLE: "x" * PADS[layout]}
    side = dataclasses.replace(side, env={**side.env, **env})
    found = found if found is not None else {}
    found.update(
        {"cases": {}, "skipped": {}, "errors": {}, "interrupted": [], "hello": {}, "names": {}}
    )
    # where the process's seconds went: its workers' starts under valgrind, and its whole life
    found["time"] = {"starts": 0.0, "process": 0.0}
    process_began = time.monotonic()
    worker = None
    try:
        for name in names:
            if STOP.is_set():
                break
            if layout and not takes_layouts(name):
                continue
            began = time.monotonic()
            try:
                if worker is None:
                    worker = paired.Worker(side, None, settings, logs)
                    found["time"]["starts"] += time.monotonic() - began
                    found["hello"] = found["hello"] or worker.hello
                began = time.monotonic()  # a case's seconds leave the worker's start out
                if starting is not None:
                    starting(name)
                answer = worker.ask(op="instructions", case=name)
            except paired.WorkerError as exc:
                if STOP.wait(INTERRUPT_GRACE):
                    found["interrupted"].append(name)
                else:
                    found["errors"][name] = str(exc)
                if worker is not None:
                    worker.close()
                worker = None
                continue
            finally:
                if done is not None:
                    done(name, time.monotonic() - began)
            if "skip" in answer:
                found["skipped"][name] = answer["skip"]
            elif "runs" not in answer:
                found["errors"][name] = answer.get("error") or str(answer)
            else:
                stem = f"{file_stem(name)}.layout{layout}"
                try:
                    found["cases"][name] = _one_layout(answer, keep, stem)
                    found["cases"][name]["seconds"] = round(time.monotonic() - began, 2)
                except (OSError, ValueError, KeyError) as exc:
                    found["errors"][name] = f"its callgrind files could not be read: {exc}"
        if name_functions and worker is not None and not STOP.is_set():
            found["names"] = worker.ask(op="names").get("names") or {}
    finally:
        if worker is not None:
            worker.close()
        shutil.rmtree(dumps, ignore_errors=True)
        found["time"]["process"] = time.monotonic() - process_began
    return found


def named(functions, names):
    """A case's ``functions`` ({(function, object): [self, inclusive]}) as rows [function, object,
    self, inclusive], the largest inclusive first: a function callgrind found no symbol for takes
    its Python name from ``names`` ({object: {address: Python name}},
    ``callgrind.unnamed_functions``) where Python reaches it, so that two builds, whose addresses
    differ, name it alike."""
    rows = [
        [names.get(obj, {}).get(function) or function, obj, own, inclusive]
        for (function, obj), (own, inclusive) in functions.items()
    ]
    return sorted(rows, key=lambda row: (-abs(row[3]), row[0]))


def merged(name, layouts, names):
    """A case's entry of the record and its function rows from its layouts' counts (``layouts``:
    [one layout's count]): the median of their values, their range as the spread (within one
    layout where there is one), the functions of the median layout; of the callgrind files kept,
    the median layout's, named after the case, and no other."""
    values = [c["value"] for c in layouts]
    value = statistics.median(values)
    middle = min(layouts, key=lambda c: (abs(c["value"] - value), c["value"]))
    spread = (
        (max(values) - min(values)) / abs(value) if len(values) > 1 and value else middle["spread"]
    )
    for layout in layouts:
        for which, path in layout["kept"].items():
            if layout is middle:
                path.rename(path.with_name(f"{file_stem(name)}.{which}.callgrind.out"))
            else:
                path.unlink(missing_ok=True)
    entry = {
        "name": name,
        "per_call": round(value, 2),
        "spread": round(spread, 6),
        "layouts": [round(v, 2) for v in values],
        "calls": middle["calls"],
        "warmup": middle["warmup"],
        # one where the probe counted HEAVY instructions per call or more
        "repeats": middle["repeats"],
        # what counting it took, summed over its layouts (setup, warm-up and runs under valgrind)
        "seconds": round(sum(c.get("seconds") or 0 for c in layouts), 1),
    }
    return entry, named(middle["functions"], names)


def measure(sides, names, *, out, jobs=None, keep=False, progress, settings=None, command=None,
            machine_info=None):  # fmt: skip
    """Each side (paired.Side) counted under callgrind in :data:`LAYOUTS` layouts, ``jobs`` worker
    processes at once (default: every core but one, shared between the sides): {side name:
    (record, {case: function rows})}. ``keep``: each case's two counted runs of its median layout
    kept in ``out/<rev>/callgrind`` (``<case>.short.callgrind.out``, ``.long``). Raises
    :class:`InstructionsError` where valgrind cannot run."""
    valgrind, why = callgrind.find()
    if valgrind is None:
        raise InstructionsError(why)
    version = callgrind.version(valgrind)
    jobs = jobs or max(1, len(machine.cores()) - 1)
    tasks = tasks_of(sides, names)
    progress(
        f"instructions: {len(sides)} commit(s) x {len(names)} cases x {LAYOUTS} layouts under "
        f"valgrind {version}, {min(jobs, len(tasks))} processes at once"
    )
    start = time.monotonic()
    ended, parts_found = {}, [{} for _ in tasks]
    tally = Tally(
        sum(layout == 0 or takes_layouts(n) for _, layout, _, part in tasks for n in part), progress
    )

    def one(k):
        side, layout, i, part = tasks[k]
        where = Path(out) / label(side.rev)
        count_part(
            side,
            part,
            valgrind=valgrind,
            layout=layout,
            logs=where / "logs" / f"part{i:02d}-layout{layout}.log",
            keep=where / "callgrind" if keep else None,
            name_functions=i == 0 and layout == 0,
            settings=settings,
            found=parts_found[k],
            done=tally.done,
            starting=tally.began,
        )
        ended[(side.name, i, layout)] = time.monotonic()

    def records(cut):
        result = {}
        for side in sides:
            mine = [p for (s, *_), p in zip(tasks, parts_found) if s is side and p]
            times = [t for (s, *_), t in ended.items() if s == side.name]
            seconds = (max(times) if times and not cut else time.monotonic()) - start
            record, table = record_of(side, mine, names, version, seconds, cut)
            record |= {"command": command, "machine": machine_info or {}}
            if cut:
                record["cut"] = True
            result[side.name] = (record, table)
        return result

    try:
        with tally.ticking():
            process.map_stoppable(STOP, one, range(len(tasks)), max(1, min(jobs, len(tasks))))
    except KeyboardInterrupt as exc:
        raise InstructionsCut(records(cut=True)) from exc
    return records(cut=False)


class Tally:
    """The pass's progress: a line every :attr:`EVERY` seconds with the case-layouts counted of
    about ``total``, the time, the slowest case so far (what a pass spends its time on), and the
    case that has been counting longest now where that is over :attr:`LONG` seconds (what a pass
    that stands still waits on)."""

    EVERY = 15.0
    LONG = 30.0

    def __init__(self, total, progress):
        self.total, self.progress = total, progress
        self.count, self.slowest, self.start = 0, ("", 0.0), time.monotonic()
        self.running = {}  # thread: (case, since)
        self.lock, self.stop = threading.Lock(), threading.Event()

    def began(self, name):
        with self.lock:
            self.running[threading.get_ident()] = (name, time.monotonic())

    def done(self, name, seconds):
        with self.lock:
            self.running.pop(threading.get_ident(), None)
            self.count += 1
            if seconds > self.slowest[1]:
                self.slowest = (name, seconds)

    def line(self):
        with self.lock:
            now = time.monotonic()
            name, seconds = self.slowest
            waiting, since = min(self.running.values(), key=lambda r: r[1], default=("", now))
            return (
                f"instructions: {self.count}/{self.total} case-layouts, {now - self.start:.0f} s"
                + (f"; slowest {counts_read.case_label(name)} {seconds:.0f} s" if name else "")
                + (
                    f"; counting {counts_read.case_label(waiting)} for {now - since:.0f} s"
                    if waiting and now - since > self.LONG
                    else ""
                )
            )

    @contextlib.contextmanager
    def ticking(self):
        """A line every :attr:`EVERY` seconds while the block runs."""
        thread = threading.Thread(target=self._tick, daemon=True)
        thread.start()
        try:
            yield
        finally:
            self.stop.set()
            thread.join()

    def _tick(self):
        while not self.stop.wait(self.EVERY):
            self.progress(self.line())


def record_of(side, parts, names, version, seconds, cut=False):
    """The record of type "instructions" of one side and its function rows ({case: rows}) from its
    processes' counts (:func:`count_part`); ``cut``: of an interrupted pass, whose record keeps the
    cases counted in every layout they take, and no other."""
    names_of = next((p["names"] for p in parts if p["names"]), {})
    hello = next((p["hello"] for p in parts if p["hello"]), {})
    errors = {k: v for p in parts for k, v in p["errors"].items()}
    cases, table = [], {}
    for name in names:
        layouts = [p["cases"][name] for p in parts if name in p["cases"]]
        whole = len(layouts) == (LAYOUTS if takes_layouts(name) else 1)
        if layouts and name not in errors and (whole or not cut):
            entry, table[name] = merged(name, layouts, names_of)
            cases.append(entry)
    record = {
        "commit": side.commit,
        "rev": side.rev,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(seconds, 1),
        "build_seconds": None,
        "command": None,
        "machine": {},
        "host": machine.host(),
        "versions": hello.get("versions") or {},
        "valgrind": version,
        # what compiled each package built from the commit (wheels.built_with), where known
        "built_with": wheels.compiled_by(side.record),
        "settings": {
            # as JSON reads them back (lists), so that a record written and one read compare
            "fast": json.loads(json.dumps(instructions.FAST)),
            "slow": json.loads(json.dumps(instructions.SLOW)),
            # (warm-up bodies before the probe, instructions per call from which a case is heavy)
            "probe": [instructions.PROBE_WARMUP, instructions.HEAVY],
            "layouts": LAYOUTS,
            "processes": len(parts),
        },
        "cases": cases,
        "skipped": {k: v for p in parts for k, v in p["skipped"].items()},
        "errors": errors,
        # the seconds of its processes, summed: their lives, their workers' starts under valgrind
        # and the cases' counting (each case's setup, warm-up, runs and the reading of its dumps)
        "time": {
            "processes": round(sum(p["time"]["process"] for p in parts), 1),
            "worker_starts": round(sum(p["time"]["starts"] for p in parts), 1),
            "cases": round(
                sum(c.get("seconds") or 0 for p in parts for c in p["cases"].values()), 1
            ),
        },
    }
    if cut:  # what the interrupt stopped in flight, said as such (not as a failure)
        record["interrupted"] = sorted({n for p in parts for n in p["interrupted"]})
    return record, table


def write(out_dir, record, functions):
    """instructions.json, instructions.md (the table) and instructions-functions.json (each case's
    functions per call) into ``out_dir``; the table."""
    text = summaries.write_files(out_dir, record, "instructions", instructions_read.markdown)
    (Path(out_dir) / "instructions-functions.json").write_text(json.dumps(functions) + "\n")
    return text


def record_commits(repo, commits, *, conf, machine_name, results_dir, command=None, info=None,
                   progress, jobs=None):  # fmt: skip
    """The instruction pass of ``cuda-bench run`` and ``window``: each of ``commits`` counted in its
    own environment and recorded in ``results_dir/<machine>/instructions.jsonl``. Its exit status:
    INCOMPLETE when a commit could not be counted or recorded, OK otherwise and where valgrind is
    not here (said, before anything is built)."""
    valgrind, why = callgrind.find()
    if valgrind is None:
        progress(f"instructions not counted: {why}")
        return OK
    out = WORK / "instructions"
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
        sides = [
            paired.Side(f"rev{i}", c, envs[c]["commit"], envs[c]["python"], record=envs[c])
            for i, c in enumerate(commits)
        ]
        names = gate.case_names([], BENCHMARKS)
        found = measure(
            sides, names, out=out, jobs=jobs, progress=progress, command=command,
            machine_info=info,
        )  # fmt: skip
    except InstructionsError as exc:
        progress(f"instructions not counted: {exc}")
        return OK
    except steps.MEASURE_ERRORS as exc:
        progress(f"instructions not counted: {exc}")
        return INCOMPLETE
    status = OK
    for side in sides:
        record, functions = found[side.name]
        here = out / label(side.rev[:12])
        write(here, record, functions)
        kept = steps.record_or_say(
            Path(results_dir) / machine_name,
            "instructions",
            record,
            here / "instructions.json",
            f"instructions at {side.rev[:9]}",
        )
        if not kept or record["errors"]:
            status = INCOMPLETE
        progress(said(record))
    return status


def said(record):
    """The pass's line for one commit."""
    return (
        f"instructions at {record['rev'][:9]}: {len(record['cases'])} counted, "
        f"{len(record['skipped'])} skipped, {len(record['errors'])} not counted in "
        f"{record['seconds']:g} s"
        + (
            f" ({spent['processes']:g} process-seconds: {spent['worker_starts']:g} starting "
            f"workers under valgrind, {spent['cases']:g} counting cases)"
            if (spent := record.get("time"))
            else ""
        )
        + (
            f"; interrupted while {len(record['interrupted'])} were being counted: the other cases "
            "were not counted"
            if record.get("cut")
            else ""
        )
    )
