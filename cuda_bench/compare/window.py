"""Stage 4, compare: one pass over a window of commits. Every commit is timed once; each adjacent
pair gets its ratio, interval and verdict from the same samples; each commit gets its asv numbers
from them too.

A window is a list of builds, oldest first (``sides``). For each process group, one worker
(``cuda_bench.run.worker``) per build runs on the same core, as a process pair's two do in the
paired engine (``cuda_bench.compare.paired``). Per case, every worker sets the case up once; then
the group takes rounds: the builds in a shuffled order, then the same order reversed (a palindrome,
A B C C B A), one sample each way. Within a round the two samples of every build sit at the same
mean position, so a linear drift of the core's speed cancels between any two builds, as ABBA cancels
it for two. A round of the adjacent builds i and i+1 is an ABBA group of theirs
(``stats.group_ratio`` of their four samples), so every adjacent pair is judged exactly as a paired
step is (``paired.judge``: the median over groups, the median over process groups with an
order-statistic interval, the threshold), from rounds it shares with its neighbours. A group spends
``seconds`` times half the builds on a case, so an adjacent pair gets about as many groups as a
paired step gives it.

What a window saves over steps one by one: each build is started, set up and timed once per
process group, instead of once per step it belongs to, and asv's own timing pass is not needed:
every sample of a build is also a sample of its commit (:class:`WindowReport` ``per_side``), which
``asv_files.save_asv`` writes as asv's results file. ``cuda_bench.compare.onepass`` measures commits
with it.
"""

from __future__ import annotations

import dataclasses
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cuda_bench.compare import paired
from cuda_bench.foundations import machine, suite
from cuda_bench.foundations.names import is_first_context

#: the builds one pass times at once, per core (a worker process each, all of them holding a CUDA
#: context): a longer window is cut into blocks of this many consecutive builds, each block sharing
#: its first build with the block before it
BLOCK = 6


@dataclass
class SideResult:
    """What one build measured in a window: per case, the time per call of each of its samples
    (ns), calls per sample (the median over process groups); or why not."""

    samples: dict = field(default_factory=dict)
    calls: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)


@dataclass
class WindowReport:
    sides: list  # paired.Side, oldest first
    settings: paired.Settings
    #: per adjacent pair of sides, a paired.Report whose sides are named "base" and "head", as a
    #: paired step's are
    steps: list
    per_side: list  # SideResult per side
    seconds: float
    workers: dict  # side name -> its first worker's hello
    cores: list
    #: {"phases": {phase: seconds summed over the process groups}, "cases": {name: seconds}}
    time: dict = field(default_factory=dict)


def measure_case(workers, name, settings, rng, now=time.monotonic, clock=None):
    """One case in one process group: ("ok", calls, states, rounds), states holding per worker
    ("ok",), ("skip", reason) or ("error", text), and rounds per round the (first, second) sample
    of each worker that has the case (None for the others); or ("error", text) when the builds'
    suites cannot be timed together. ``rng`` shuffles each round's order. A worker that dies
    (``paired.WorkerError``) is replaced in ``workers`` by a :class:`Lost` one: its build's state
    is the error, and the other builds go on with the case."""
    clock = clock or paired.Clock()
    answers = [_asked(workers, k, lambda w: w.setup(name)) for k in range(len(workers))]
    clock("setup")
    outcome = _sample_case(workers, answers, settings.for_case(name), rng, now, clock)
    _teardown(workers, answers)
    clock("teardown")
    return outcome


class Lost:
    """A build's worker that died in this process group (``again``: the group starts a new one for
    the next case, :func:`one_group`) or could not start (for the rest of the group): every case it
    is asked for reads as that error."""

    def __init__(self, side, error, again=True):
        self.side, self.error, self.again, self.hello = side, error, again, {}

    def setup(self, name):
        return {"error": self.error}

    def sample(self, calls):
        raise paired.WorkerError(self.error)

    def teardown(self):
        pass

    def close(self):
        pass


def _asked(workers, k, ask):
    """``ask(workers[k])``; a worker that dies is replaced by a :class:`Lost` one, and its answer is
    the error."""
    try:
        return ask(workers[k])
    except paired.WorkerError as exc:
        workers[k].close()
        workers[k] = Lost(workers[k].side, str(exc))
        return {"error": str(exc), "lost": True}


def _teardown(workers, answers):
    for k, answer in enumerate(answers):
        if "ok" in answer:
            _asked(workers, k, lambda w: w.teardown())


def _state(worker, answer):
    if "error" in answer:
        return ("error", f"{worker.side.name}: {answer['error']}")
    if "skip" in answer:
        return ("skip", answer["skip"])
    return ("ok",)


def _sample_case(workers, answers, settings, rng, now, clock):
    states = [_state(w, a) for w, a in zip(workers, answers)]
    ok = [i for i, state in enumerate(states) if state == ("ok",)]
    if not ok:
        return ("ok", None, states, [])
    unrolls = sorted({answers[i].get("unroll") or 1 for i in ok})
    if len(unrolls) > 1:
        return (
            "error",
            "the builds' suites unroll the body differently: "
            + " and ".join(map(str, unrolls))
            + " calls",
        )
    number = next((answers[i]["number"] for i in ok if answers[i].get("number")), None)

    def died(i, answer):  # the build's state is its error; the others go on without it
        states[i] = _state(workers[i], answer)
        ok.remove(i)

    calls = number
    while calls is None and ok:
        found = _asked(workers, ok[0], lambda w: paired.calls_per_sample(w, settings, unrolls[0]))
        calls = None if isinstance(found, dict) else found
        if calls is None:
            died(ok[0], found)
    clock("calibrate")
    for i in list(ok) if settings.warm_up else []:  # one turn each before the rounds: all warm
        answer = _asked(workers, i, lambda w: w.sample(calls))
        if isinstance(answer, dict):
            died(i, answer)
    clock("warm-up")
    rounds = []
    end = now() + settings.seconds * max(1.0, len(ok) / 2)
    while ok and (
        len(rounds) < settings.min_groups or (now() < end and len(rounds) < settings.max_groups)
    ):
        order = list(ok)
        rng.shuffle(order)
        row = [None] * len(workers)
        taken = {i: [] for i in order}
        for i in order + order[::-1]:
            answer = _asked(workers, i, lambda w: w.sample(calls))
            if isinstance(answer, dict):  # a round a build died in is dropped whole
                died(i, answer)
                break
            taken[i].append(answer)
        else:
            for i in order:
                row[i] = tuple(taken[i])
            rounds.append(row)
    clock("timed")
    return ("ok", calls, states, rounds)


def one_group(group, sides, names, settings, log_dir, core, done, make_worker=paired.Worker):
    """Process group number ``group``: a worker per side on ``core``, every case in a shuffled
    order (``paired.each_case``). ({name: outcome of :func:`measure_case`}, {side name: hello},
    where the time went)."""
    rng = random.Random(1_000_003 * (group + 1))
    hello = {}

    def log(side):
        return Path(log_dir) / f"group{group:02d}-{side.name}.log"

    def start():
        workers = [started(make_worker, side, core, settings, log(side)) for side in sides]
        said(hello, workers)
        return workers

    def measure(workers, name, clock):
        outcome = measure_case(workers, name, settings, rng, clock=clock)
        for k, worker in enumerate(workers):  # a build whose worker died starts a new one
            if isinstance(worker, Lost) and worker.again:
                workers[k] = started(make_worker, worker.side, core, settings, log(worker.side))
        said(hello, workers)
        return outcome

    found, spent = paired.each_case(
        group, names, settings, core, done, start, measure, pinned=make_worker is paired.Worker
    )
    return found, hello, spent


def said(hello, workers):
    """Each build's first hello (its versions, its layout) from a worker that started: a
    :class:`Lost` one says nothing, so that a later worker of its build says it."""
    for worker in workers:
        if not isinstance(worker, Lost):
            hello.setdefault(worker.side.name, worker.hello)


def started(make_worker, side, core, settings, log):
    """A worker of ``side``; a :class:`Lost` one where it cannot start, so that only its build's
    steps miss the cases."""
    try:
        return make_worker(side, core, settings, log)
    except paired.WorkerError as exc:
        return Lost(side, str(exc), again=False)


def pair_outcome(outcome, i, j):
    """A process group's outcome of a case (:func:`measure_case`) as the paired engine's outcome of
    the pair of sides ``i`` (base) and ``j`` (head): ("ok", calls, ABBA groups), ("skip", reason),
    ("only", side, reason) or ("error", text), as ``paired.measure_case`` gives them."""
    if outcome[0] == "error":
        return outcome
    _, calls, states, rounds = outcome
    a, b = states[i], states[j]
    errors = [state[1] for state in (a, b) if state[0] == "error"]
    if errors:
        return ("error", "\n".join(errors))
    if a[0] == "skip" and b[0] == "skip":
        return ("skip", a[1] if a[1] == b[1] else f"base: {a[1]}; head: {b[1]}")
    if a[0] == "skip":
        return ("only", "head", a[1])
    if b[0] == "skip":
        return ("only", "base", b[1])
    return ("ok", calls, [(r[i][0], r[j][0], r[j][1], r[i][1]) for r in rounds])


def side_result(outcomes, names, k, settings=None):
    """What side ``k`` measured, pooled over the process groups that timed each case
    (:class:`SideResult`; every group, without ``settings``)."""
    out = SideResult()
    for name in names:
        samples, calls, reasons, errors = [], [], [], []
        for found in paired.timed_in(outcomes, name, settings) if settings else outcomes:
            outcome = found.get(name) or ("error", "not measured")
            if outcome[0] == "error":
                errors.append(outcome[1])
                continue
            _, n, states, rounds = outcome
            if states[k][0] == "ok":
                samples += [s / n for r in rounds for s in r[k]]
                calls.append(n)
            elif states[k][0] == "skip":
                reasons.append(states[k][1])
            else:
                errors.append(states[k][1])
        if samples:
            out.samples[name] = samples
            out.calls[name] = int(statistics.median(calls))
        elif reasons:
            out.skipped[name] = reasons[0]
        else:
            out.errors[name] = errors[0] if errors else "not measured"
    return out


def run(
    sides,
    names,
    settings,
    log_dir,
    thresholds=None,
    progress=None,
    cores=None,
    make_worker=paired.Worker,
):
    """Measure ``names`` with every build of ``sides`` (oldest first) in one pass: a
    :class:`WindowReport`. Process groups run in processes of their own; with another
    ``make_worker`` (tests), in threads."""
    if not sides:
        raise ValueError("a window needs a build")
    if len({side.name for side in sides}) < len(sides):
        raise ValueError("each side of a window needs a name of its own")
    progress = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    thresholds = thresholds or {}
    cores = list(cores or paired.default_cores())
    jobs = min(settings.pairs, settings.jobs or len(cores), len(cores))
    per_case = settings.seconds * max(1.0, len(sides) / 2)
    here = suite.running_here(names, machine.gpu_info(), settings.benchmark_dir)  # the estimate's
    # the cases on the cores at once, and the first contexts one at a time after them
    groups = sum(settings.pairs_of(name) for name in here if not is_first_context(name))
    estimate = groups / jobs * (per_case + 0.03 * len(sides)) + settings.first_contexts_seconds(
        here, len(sides)
    )
    progress(
        f"window: {len(sides)} builds x {suite.counted(names, here)} x {settings.pairs} process "
        f"groups, {jobs} at a time on cores {','.join(map(str, cores[:jobs]))}; {per_case:g} s of "
        f"rounds per case and group (about {estimate / 60:.1f} min)"
    )
    start = time.monotonic()
    args, what = (sides, names, settings, log_dir), ("window", "process groups")
    outcomes, hello, spent = paired.in_groups(
        one_group, args, cores[:jobs], progress, make_worker, what
    )
    found = [group_found for group_found, _, _ in outcomes]
    seconds = round(time.monotonic() - start, 1)
    steps = [
        step_of(found, sides, i, names, settings, thresholds, seconds, hello, cores[:jobs], spent)
        for i in range(len(sides) - 1)
    ]
    per_side = [side_result(found, names, k, settings) for k in range(len(sides))]
    progress(f"window: {seconds:g} s on {jobs} cores; {paired.time_spent(spent['phases'])}")
    return WindowReport(sides, settings, steps, per_side, seconds, hello, cores[:jobs], spent)


def step_of(found, sides, i, names, settings, thresholds, seconds, hello, cores, spent):
    """The paired step of sides ``i`` and ``i + 1`` from the process groups' outcomes (``found``),
    judged as the paired engine judges one (``paired.judge``): a ``paired.Report`` whose sides are
    named "base" and "head"."""
    pairs = {
        name: [
            pair_outcome(g.get(name) or ("error", "not measured"), i, i + 1)
            for g in paired.timed_in(found, name, settings)
        ]
        for name in names
    }
    results, skipped, only, errors, lost = paired.judge(names, pairs, settings, thresholds)
    return paired.Report(
        [
            dataclasses.replace(sides[i], name="base"),
            dataclasses.replace(sides[i + 1], name="head"),
        ],
        settings,
        results,
        skipped,
        only,
        errors,
        seconds,
        {"base": hello.get(sides[i].name, {}), "head": hello.get(sides[i + 1].name, {})},
        cores,
        lost,
        spent,
    )


def blocks(items, size=BLOCK):
    """``items`` cut into runs of at most ``size`` (at least 2), each starting with the last item
    of the one before it, so that every adjacent pair is in exactly one block; one item is one
    block of it alone (its numbers, no step)."""
    size = max(2, size)
    if len(items) <= size:
        return [list(items)] if items else []
    out, at = [], 0
    while at < len(items) - 1:
        out.append(list(items[at : at + size]))
        at += size - 1
    return out
