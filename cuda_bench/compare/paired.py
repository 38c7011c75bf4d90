"""Stage 4, compare: the paired engine. Two builds of cuda-python, every case, interleaved sample by
sample.

For each process pair, two workers (``cuda_bench.run.worker``), one per build, run on the same core
with the same hash seed, each with a memory layout of its own (``Settings.layouts``: address-space
randomisation on, or off with "fixed", over C++'s default). For each case both set up the suite's
own benchmark class, then take turns: A, B, B, A (one ABBA group), again and again for ``seconds``.
A sample is ``calls`` calls of the operation (whole runs of the benchmark's unrolled body), sized so
that a sample lasts about ``sample_ns`` (queued operations use their class's fixed batch and are
drained after every sample, untimed). The machine's speed, which on the H200 VM changes by 2x for
seconds at a time, is the same within a group and cancels in its ratio;
``cuda_bench.foundations.stats`` turns the groups into a ratio, an interval over process pairs and a
verdict.

Process pairs run concurrently, one per core (core 0 is left to the controller and the system where
there are more than two). A pair is driven by its own process pinned to the pair's core, so the
driver and its two workers take turns on that core and never wait for another pair's driver; each
pair goes through the cases in its own shuffled order, so that no two pairs load the GPU with the
same operation at the same time. The first contexts come after every other case, one pair at a
time with fresh workers (:func:`in_groups`). A worker that dies or stops answering (``timeout``) is
reported with its log, and its pair starts fresh workers for the next case; a case that only a few
pairs lost this way is measured from the others, and the loss is named (``kept``).
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import random
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cuda_bench.compare.settings import (  # noqa: F401 (the engine's settings, as paired.Settings)
    OVER_CPP_LAYOUTS,
    OVER_CPP_PROCESSES,
    Settings,
    Side,
)
from cuda_bench.foundations import machine, process, stats, suite
from cuda_bench.foundations.names import is_control, is_first_context
from cuda_bench.foundations.paths import ROOT
from cuda_bench.foundations.text import last_line
from cuda_bench.run.worker import calls_for

MAX_CALLS = 1 << 22


class WorkerError(RuntimeError):
    pass


class Worker:
    """A ``cuda_bench.run.worker`` process of one side, pinned to one core (``core`` None: not
    pinned); its stderr goes to ``log``."""

    def __init__(self, side, core, settings, log):
        self.side, self.core, self.log, self.timeout = side, core, Path(log), settings.timeout
        fixed = machine.no_aslr_prefix() if settings.layouts == "fixed" else []
        cmd = [
            *fixed,
            *settings.wrapper,
            side.python,
            "-m",
            "cuda_bench.run.worker",
            *(["--core", str(core)] if core is not None else []),
            "--benchmark-dir",
            str(settings.benchmark_dir),
        ]
        env = machine.timed_env()
        env.update(side.env)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
        env["PYTHONUNBUFFERED"] = "1"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "a") as stderr:
            # the pair's earlier workers wrote before this: not this one's tail
            self.log_start = stderr.tell()
            try:
                self.proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    text=True,
                    bufsize=1,
                    env=env,
                    cwd=ROOT,
                    preexec_fn=process.die_with_parent,
                )
            # a WorkerError, as every other way a worker fails: its pair goes on
            except OSError as exc:
                raise WorkerError(
                    f"the {side.name} worker ({side.rev}) could not start: {exc}"
                ) from exc
        self.hello = self.ask(op="hello")
        if "error" in self.hello:
            self.close()
            raise WorkerError(
                f"{side.name} worker ({side.rev}) did not start: {self.hello['error']}"
            )

    def ask(self, **request):
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
            if not ready:
                self.proc.kill()
                raise WorkerError(
                    f"the {self.side.name} worker ({self.side.rev}) gave no answer to "
                    f"{request.get('op')} in {self.timeout:g} s; killed (log {self.log})"
                )
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            try:
                code = self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                code = None
            raise WorkerError(
                f"the {self.side.name} worker ({self.side.rev}) died"
                f"{f' (exit {code})' if code is not None else ''} during {request.get('op')}; "
                f"log {self.log}{self.log_tail()}"
            )
        try:
            return json.loads(line)
        except json.JSONDecodeError as exc:  # something else wrote to the worker's stdout
            raise WorkerError(
                f"the {self.side.name} worker ({self.side.rev}) answered {request.get('op')} with "
                f"{line[:200]!r}, not a JSON line; log {self.log}"
            ) from exc

    def log_tail(self, lines=12):
        """What this worker wrote to its log, its last ``lines``, after a colon; or why there is
        nothing."""
        try:
            with open(self.log, "rb") as f:
                f.seek(self.log_start)
                text = f.read().decode(errors="replace")
        except OSError:
            return " (missing)"
        tail = "\n".join(text.splitlines()[-lines:])
        return f":\n{tail}" if tail.strip() else " (empty)"

    def setup(self, name):
        return self.ask(op="setup", case=name)

    def sample(self, calls):
        answer = self.ask(op="sample", n=calls)
        if "ns" not in answer:
            raise WorkerError(f"{self.side.name} worker: {answer.get('error', answer)}")
        return answer["ns"]

    def teardown(self):
        return self.ask(op="teardown")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def calls_per_sample(a, settings, unroll=1):
    """Calls per sample: whole bodies of ``unroll`` calls, grown until one of A's samples lasts
    ``sample_ns`` (at least one body)."""
    return calls_for(a.sample, settings.sample_ns, unroll, MAX_CALLS)


class Clock:
    """Where a process pair's time goes: ``clock(phase)`` adds the wall time since the last mark to
    ``phase`` in ``into`` (seconds), which a step's record keeps (``Report.phases``) so that its
    cost can be cut where it is."""

    def __init__(self, into=None):
        self.into = {} if into is None else into
        self.last = time.perf_counter()

    def __call__(self, phase):
        now = time.perf_counter()
        self.into[phase] = self.into.get(phase, 0.0) + now - self.last
        self.last = now


#: the phases of a process pair, in the order they happen (:class:`Clock`)
PHASES = ("start", "setup", "calibrate", "warm-up", "timed", "teardown")


def measure_case(a, b, name, settings, now=time.monotonic, clock=None):
    """One case in one process pair. ("ok", calls, groups) with groups of (a1, b1, b2, a2)
    nanoseconds, ("skip", reason), ("only", side, reason) when one build has the case and the other
    skips it, or ("error", text). ``clock``: a :class:`Clock` that hears of each phase."""
    clock = clock or Clock()
    answers = (a.setup(name), b.setup(name))
    clock("setup")
    try:
        outcome = _sample_case(a, b, answers, settings.for_case(name), now, clock)
    # a worker died or hung: the error that says so is the one to keep, not teardown's
    except WorkerError:
        _teardown(a, b, answers, quiet=True)
        raise
    _teardown(a, b, answers)
    clock("teardown")
    return outcome


def _teardown(a, b, answers, quiet=False):
    """Teardown on each worker whose setup worked; ``quiet``: after another error, a worker that
    cannot answer any more (dead, killed) is left as it is."""
    for worker, answer in zip((a, b), answers):
        if "ok" in answer:
            try:
                worker.teardown()
            except WorkerError:
                if not quiet:
                    raise


def _sample_case(a, b, answers, settings, now, clock):
    """:func:`measure_case` after both setups answered."""
    errors = [f"{w.side.name}: {ans['error']}" for w, ans in zip((a, b), answers) if "error" in ans]
    if errors:
        return ("error", "\n".join(errors))
    skips = [(w.side.name, ans["skip"]) for w, ans in zip((a, b), answers) if "skip" in ans]
    if len(skips) == 2:
        return (
            "skip",
            skips[0][1] if skips[0][1] == skips[1][1] else "; ".join(f"{s}: {r}" for s, r in skips),
        )
    if skips:
        present = b.side.name if skips[0][0] == a.side.name else a.side.name
        return ("only", present, skips[0][1])
    if answers[0].get("unroll") != answers[1].get("unroll"):
        return (
            "error",
            f"the builds' suites unroll the body differently: {answers[0].get('unroll')} "
            f"and {answers[1].get('unroll')} calls",
        )
    number = answers[0].get("number") or answers[1].get("number")
    calls = number or calls_per_sample(a, settings, answers[0].get("unroll") or 1)
    clock("calibrate")
    if settings.warm_up:
        a.sample(calls), b.sample(calls)  # one turn each before the groups: both warm at this size
    clock("warm-up")
    groups = []
    end = now() + settings.seconds
    while len(groups) < settings.min_groups or (now() < end and len(groups) < settings.max_groups):
        a1 = a.sample(calls)
        b1 = b.sample(calls)
        b2 = b.sample(calls)
        a2 = a.sample(calls)
        groups.append((a1, b1, b2, a2))
    clock("timed")
    return ("ok", calls, groups)


@dataclass
class Report:
    sides: list
    settings: Settings
    cases: list  # stats.CaseResult, in suite order
    skipped: dict  # name -> reason (both builds skip it)
    only: dict  # name -> (side that has it, the other's skip reason)
    errors: dict  # name -> text
    seconds: float
    workers: dict  # side name -> the first worker's hello (versions, ASLR, core)
    cores: list
    # name -> text: measured, but some process pairs could not (:func:`kept`)
    lost: dict = field(default_factory=dict)
    #: {"phases": {phase: seconds summed over the process pairs}, "cases": {name: seconds}}: where
    #: the time went
    time: dict = field(default_factory=dict)


def kept(answers, failed, confidence=stats.CONFIDENCE):
    """A case's answers from its process pairs (or processes), of which ``failed(answer)`` could not
    measure it (a worker that died or timed out, a setup that failed there): (the others, or None
    when they are too few; the first failure, or None). Enough: at least half of them, and as many
    as a ``confidence`` interval needs (:func:`stats.fewest_pairs`) where the run had that many. The
    case is then measured from the rest, so one timeout on a busy machine does not throw away 44
    good pairs; the loss is reported next to it (``Report.lost``) and makes the run's exit status 2,
    as an error does (``gate.exit_status``):
    a build that crashes now and then is a finding too."""
    good = [a for a in answers if not failed(a)]
    first = next((a for a in answers if failed(a)), None)
    enough = max((len(answers) + 1) // 2, min(len(answers), stats.fewest_pairs(confidence)))
    return (good if len(good) >= enough else None), first


def sort_out(every, failed, error_of, what, confidence=stats.CONFIDENCE):
    """One case through :func:`kept`, as both the A/B engine and over C++ report it: (the answers it
    is measured from, or None; its error when too few are left; what ``lost`` says when some were
    lost). ``every``: one answer per process pair (``what``: "process pairs") or process;
    ``error_of(answer)``: the text of a failed one. An error's last line (the one every report
    shows) says how many failed."""
    answers, failure = kept(every, failed, confidence)
    total = len(every)
    if answers is None:
        good = sum(not failed(a) for a in every)
        error = error_of(failure)
        if good:
            error = (
                f"{error.rstrip()}\n{last_line(error)} ({total - good} of {total} {what} failed; "
                f"the {good} left are too few)"
            )
        return None, error, None
    if failure is None:
        return answers, None, None
    good = len(answers)
    return (
        answers,
        None,
        (
            f"{total - good} of {total} {what} lost, measured from the other {good}; "
            f"the first: {last_line(error_of(failure))}"
        ),
    )


def default_cores():
    found = machine.cores()
    return found[1:] if len(found) > 2 else found


def in_pair(pair, names, settings):
    """The cases process pair (or group) number ``pair`` times, in its own shuffled order: those
    whose process pairs it is one of (``Settings.pairs_of``)."""
    order = list(names)
    random.Random(pair).shuffle(order)
    return [name for name in order if pair < settings.pairs_of(name)]


def timed_in(outcomes, name, settings):
    """The outcomes (one per process pair or group, in order) of the pairs that timed ``name``."""
    return outcomes[: settings.pairs_of(name)]


def each_case(group, names, settings, core, done, start, measure, pinned=True):
    """Process pair (or group) ``group`` on ``core``: ``start()`` its workers, ``measure(workers,
    name, clock)`` each case in its shuffled order; a WorkerError is that case's error, and fresh
    workers start for the next. ({name: outcome}, time spent); ``done(name)`` after each case."""
    if pinned and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    found, workers, spent = {}, None, {"phases": {}, "cases": {}}
    clock = Clock(spent["phases"])
    try:
        for name in in_pair(group, names, settings):
            begun = clock.last
            try:
                if workers is None:
                    workers = start()
                    clock("start")
                found[name] = measure(workers, name, clock)
            except WorkerError as exc:
                found[name] = ("error", str(exc))
                for worker in workers or []:
                    worker.close()
                workers = None
                clock("lost")
            spent["cases"][name] = time.perf_counter() - begun
            done(name)
    finally:
        for worker in workers or []:
            worker.close()
    return found, spent


def one_pair(pair, sides, names, settings, log_dir, core, done, make_worker=Worker):
    """Process pair number ``pair``: both workers on ``core``, every case in a shuffled order
    (:func:`each_case`). ({name: outcome of measure_case}, {side name: hello}, time spent)."""
    hello = {}

    def start():
        workers = [
            make_worker(side, core, settings, Path(log_dir) / f"pair{pair:02d}-{side.name}.log")
            for side in sides
        ]
        for worker in workers:
            hello.setdefault(worker.side.name, worker.hello)
        return workers

    def measure(workers, name, clock):
        return measure_case(*workers, name, settings, clock=clock)

    found, spent = each_case(
        pair, names, settings, core, done, start, measure, pinned=make_worker is Worker
    )
    return found, hello, spent


def in_groups(task, args, cores, progress, make_worker, what):
    """``task`` (:func:`one_pair`, ``window.one_group``) per process pair or group on ``cores``, in
    processes (threads with another ``make_worker``): outcomes (a failed task's: :func:`failed_as`),
    {side: its first hello}, time spent. ``what``: ("paired", "process pairs") or the window's.

    The first contexts (``names.is_first_context``) are measured after every other case, one
    process pair or group at a time on the first core, with nothing else running on the machine:
    beside the other cases' launches, allocations and synchronisations through the same driver, a
    first context's interval spanned x0.5 to x2 on the H100, against x0.95-1.03 alone
    (docs/evidence/cold-starts-h100). Its pairs add their ``log_dir/first-contexts``."""
    sides, names, settings, log_dir = args
    log_dir = Path(log_dir)
    alone = [name for name in names if is_first_context(name)]
    rest = [name for name in names if not is_first_context(name)]
    outcomes = []
    first = max(map(settings.pairs_of, alone), default=0)
    phases = (
        (rest, cores, settings.pairs, log_dir),
        (alone, cores[:1], first, log_dir / "first-contexts"),
    )
    measured = False
    for mine, on, count, logs in phases:
        if not mine:
            continue
        found = process.in_parallel(
            task if make_worker is Worker else functools.partial(task, make_worker=make_worker),
            (sides, mine, settings, logs),
            count,
            on,
            sum(map(settings.pairs_of, mine)),
            progress,
            what[0] + (" (first contexts, one at a time)" if mine is alone else ""),
            threads=make_worker is not Worker,
        )
        # every task of the last phase lost is its cases' errors where the first measured the rest
        found = failed_as(
            found,
            what[1],
            lambda exc, mine=mine: (
                {n: ("error", str(exc)) for n in mine},
                {},
                {"phases": {}, "cases": {}},
            ),
            all_lost_is_error=not measured,
        )
        measured = True
        outcomes = [joined(a, b) for a, b in itertools.zip_longest(outcomes, found)]
    hello = {}
    for _, told, _ in outcomes:
        hello.update({side: said for side, said in told.items() if side not in hello})
    return outcomes, hello, spent_in([group_spent for _, _, group_spent in outcomes])


def joined(first, then):
    """One process pair's or group's outcome of two phases (either None where it ran in one):
    their cases, hellos and time spent together."""
    if first is None or then is None:
        return first or then
    phases = dict(first[2]["phases"])
    for phase, seconds in then[2]["phases"].items():
        phases[phase] = phases.get(phase, 0) + seconds
    return (
        {**first[0], **then[0]},
        {**then[1], **first[1]},
        {"phases": phases, "cases": {**first[2]["cases"], **then[2]["cases"]}},
    )


def failed_as(outcomes, what, as_error, all_lost_is_error=True):
    """The outcomes of ``process.in_parallel``, each task that failed as ``as_error(its
    exception)``: it lost every case it had not reported, as errors of that task, which the other
    tasks can make up for (:func:`kept`). When every task (``what``: "process pairs",
    "processes") failed and ``all_lost_is_error``, nothing was measured: a WorkerError naming the
    first."""
    if all_lost_is_error and outcomes and all(isinstance(o, BaseException) for o in outcomes):
        raise WorkerError(
            f"every one of the {len(outcomes)} {what} failed; the first: {outcomes[0]}"
        )
    return [as_error(o) if isinstance(o, BaseException) else o for o in outcomes]


def run(
    sides, names, settings, log_dir, thresholds=None, progress=None, cores=None, make_worker=Worker
):
    """Measure ``names`` (case names) with ``sides`` (base, head): a :class:`Report`. Process pairs
    run in processes of their own; with another ``make_worker`` (tests), in threads."""
    progress = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    thresholds = thresholds or {}
    cores = list(cores or default_cores())
    jobs = min(settings.pairs, settings.jobs or len(cores), len(cores))
    here = suite.running_here(names, machine.gpu_info(), settings.benchmark_dir)  # the estimate's
    # the cases on the cores at once, then the first contexts one at a time (:func:`in_groups`)
    pairs = sum(settings.pairs_of(name) for name in here if not is_first_context(name))
    estimate = pairs / jobs * (settings.seconds + 0.05) + settings.first_contexts_seconds(here, 2)
    progress(
        f"paired: {suite.counted(names, here)} x {settings.pairs} process pairs, {jobs} at a time "
        f"on cores {','.join(map(str, cores[:jobs]))}; {settings.seconds:g} s of ABBA groups per "
        f"case and pair (about {estimate / 60:.1f} min)"
    )
    start = time.monotonic()
    args, what = (sides, names, settings, log_dir), ("paired", "process pairs")
    outcomes, hello, spent = in_groups(one_pair, args, cores[:jobs], progress, make_worker, what)
    found = {
        name: [
            pair_found.get(name) or ("error", "not measured")
            for pair_found, _, _ in timed_in(outcomes, name, settings)
        ]
        for name in names
    }
    results, skipped, only, errors, lost = judge(names, found, settings, thresholds)
    seconds = round(time.monotonic() - start, 1)
    progress(f"paired: {seconds:g} s on {jobs} cores; {time_spent(spent['phases'])}")
    return Report(
        sides, settings, results, skipped, only, errors, seconds, hello, cores[:jobs], lost, spent
    )


def spent_in(parts):
    """Where the time of several process pairs (or groups) went, summed: {"phases": {phase:
    seconds}, "cases": {name: seconds}}, each rounded to 0.01 s."""
    spent = {"phases": {}, "cases": {}}
    for part_spent in parts:
        for part in ("phases", "cases"):
            for key, seconds in part_spent[part].items():
                spent[part][key] = spent[part].get(key, 0.0) + seconds
    return {
        part: {key: round(seconds, 2) for key, seconds in found.items()}
        for part, found in spent.items()
    }


def judge(names, found, settings, thresholds):
    """Each case of ``names`` from its outcomes, one per process pair (``found[name]``: what
    :func:`measure_case` returns): (results, skipped, only, errors, lost), as :class:`Report` holds
    them. A case is measured from the pairs that did not fail where enough are left (:func:`kept`);
    its ratio, interval and verdict are ``stats.analyse``'s against its threshold."""
    results, skipped, only, errors, lost = [], {}, {}, {}, {}
    for name in names:
        outcomes_, error, lost_note = sort_out(
            found[name],
            lambda o: o[0] == "error",
            lambda o: o[1],
            "process pairs",
            settings.confidence,
        )
        if error:
            errors[name] = error
            continue
        kinds = {o[0] for o in outcomes_}
        if kinds == {"skip"}:
            skipped[name] = outcomes_[0][1]
        elif kinds == {"only"}:
            only[name] = outcomes_[0][1:]
        elif kinds == {"ok"}:
            threshold = thresholds.get(name, stats.DEFAULT_THRESHOLD)
            results.append(
                stats.analyse(
                    name,
                    [o[1:] for o in outcomes_],
                    threshold,
                    is_control(name),
                    settings.confidence,
                )
            )
        else:
            errors[name] = f"process pairs disagree whether it runs: {sorted(kinds)}"
        if lost_note and name not in errors:
            lost[name] = lost_note
    return results, skipped, only, errors, lost


def time_spent(phases):
    """One line: each phase's share of the process pairs' time (``Report.time["phases"]``)."""
    total = sum(phases.values()) or 1
    order = [p for p in PHASES if p in phases] + sorted(set(phases) - set(PHASES))
    return (
        ", ".join(f"{phase} {phases[phase] / total:.0%}" for phase in order)
        + f" of {total:.0f} core-seconds"
    )


def counted(data):
    """The cases that decide (controls never do)."""
    return [c for c in data["cases"] if not c.get("control")]


def regressions(data):
    return [c for c in counted(data) if c["verdict"] == "regression"]
