"""Stage 4, compare: one pass over a window of commits. Every commit is timed once; each adjacent
pair gets its ratio, interval and verdict from the same samples; each commit gets its asv numbers
from them too.

A window is a list of builds, oldest first (``sides``). For each process group, one worker
(``cuda_bench.worker``) per build runs on the same core, as a process pair's two do in the paired
engine (``cuda_bench.paired``). Per case, every worker sets the case up once; then the group takes
rounds: the builds in a shuffled order, then the same order reversed (a palindrome, A B C C B A),
one sample each way. Within a round the two samples of every build sit at the same mean position, so
a linear drift of the core's speed cancels between any two builds, as ABBA cancels it for two. A
round of the adjacent builds i and i+1 is an ABBA group of theirs (``stats.group_ratio`` of their
four samples), so every adjacent pair is judged exactly as a paired step is (``paired.judge``: the
median over groups, the median over process groups with an order-statistic interval, the
threshold), from rounds it shares with its neighbours. A group spends ``seconds`` times half the
builds on a case, so an adjacent pair gets about as many groups as a paired step gives it.

What a window saves over steps one by one: each build is started, set up and timed once per
process group, instead of once per step it belongs to, and asv's own timing pass is not needed:
every sample of a build is also a sample of its commit (:class:`WindowReport` ``per_side``), which
``results.save_asv`` writes as asv's results file.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cuda_bench import (
    asvrun,
    compare,
    countpass,
    history,
    paired,
    process,
    records,
    results,
    steps,
    trees,
)
from cuda_bench.paths import COMMITS, WORK
from cuda_bench.status import INCOMPLETE, OK, REGRESSION, worst
from cuda_bench.text import interval

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
    suites cannot be timed together. ``rng`` shuffles each round's order."""
    clock = clock or paired.Clock()
    answers = [worker.setup(name) for worker in workers]
    clock("setup")
    try:
        outcome = _sample_case(workers, answers, settings, rng, now, clock)
    except paired.WorkerError:
        _teardown(workers, answers, quiet=True)
        raise
    _teardown(workers, answers)
    clock("teardown")
    return outcome


def _teardown(workers, answers, quiet=False):
    for worker, answer in zip(workers, answers):
        if "ok" in answer:
            try:
                worker.teardown()
            except paired.WorkerError:
                if not quiet:
                    raise


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
    calls = number or paired.calls_per_sample(workers[ok[0]], settings, unrolls[0])
    clock("calibrate")
    for i in ok:  # one turn each before the rounds: all warm at this size
        workers[i].sample(calls)
    clock("warm-up")
    rounds = []
    end = now() + settings.seconds * max(1.0, len(ok) / 2)
    while len(rounds) < settings.min_groups or (now() < end and len(rounds) < settings.max_groups):
        order = list(ok)
        rng.shuffle(order)
        first = [workers[i].sample(calls) for i in order]
        second = [workers[i].sample(calls) for i in reversed(order)]
        row = [None] * len(workers)
        for k, i in enumerate(order):
            row[i] = (first[k], second[-1 - k])
        rounds.append(row)
    clock("timed")
    return ("ok", calls, states, rounds)


def one_group(group, sides, names, settings, log_dir, core, done, make_worker=paired.Worker):
    """Process group number ``group``: a worker per side on ``core``, every case in a shuffled
    order. ({name: outcome of :func:`measure_case`}, {side name: hello}, where the time went)."""
    if hasattr(os, "sched_setaffinity") and make_worker is paired.Worker:
        os.sched_setaffinity(0, {core})  # this driver takes turns with its workers on their core
    order = list(names)
    random.Random(group).shuffle(order)
    rng = random.Random(1_000_003 * (group + 1))
    found, workers, hello, spent = {}, None, {}, {"phases": {}, "cases": {}}
    clock = paired.Clock(spent["phases"])
    try:
        for name in order:
            begun = clock.last
            try:
                if workers is None:
                    workers = []
                    for side in sides:
                        log = Path(log_dir) / f"group{group:02d}-{side.name}.log"
                        workers.append(make_worker(side, core, settings, log))
                    for worker in workers:
                        hello.setdefault(worker.side.name, worker.hello)
                    clock("start")
                found[name] = measure_case(workers, name, settings, rng, clock=clock)
            except paired.WorkerError as exc:
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
    return found, hello, spent


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


def side_result(outcomes, names, k):
    """What side ``k`` measured, pooled over the process groups (:class:`SideResult`)."""
    out = SideResult()
    for name in names:
        samples, calls, reasons, errors = [], [], [], []
        for found in outcomes:
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
    total = len(names) * settings.pairs
    per_case = settings.seconds * max(1.0, len(sides) / 2)
    progress(
        f"window: {len(sides)} builds x {len(names)} cases x {settings.pairs} process groups, "
        f"{jobs} at a time on cores {','.join(map(str, cores[:jobs]))}; {per_case:g} s of rounds "
        f"per case and group (about {total / jobs * (per_case + 0.03 * len(sides)) / 60:.1f} min)"
    )
    start = time.monotonic()
    task = (
        one_group
        if make_worker is paired.Worker
        else functools.partial(one_group, make_worker=make_worker)
    )
    outcomes = process.in_parallel(
        task,
        (sides, names, settings, log_dir),
        settings.pairs,
        cores[:jobs],
        total,
        progress,
        "window",
        threads=make_worker is not paired.Worker,
    )
    outcomes = paired.failed_as(
        outcomes,
        "process groups",
        lambda exc: ({n: ("error", str(exc)) for n in names}, {}, {"phases": {}, "cases": {}}),
    )
    hello = {}
    for _, group_hello, _ in outcomes:
        for side, answer in group_hello.items():
            hello.setdefault(side, answer)
    spent = paired.spent_in([group_spent for _, _, group_spent in outcomes])
    found = [group_found for group_found, _, _ in outcomes]
    seconds = round(time.monotonic() - start, 1)
    steps = []
    for i in range(len(sides) - 1):
        pairs = {
            name: [pair_outcome(g.get(name) or ("error", "not measured"), i, i + 1) for g in found]
            for name in names
        }
        results, skipped, only, errors, lost = paired.judge(names, pairs, settings, thresholds)
        base = dataclasses.replace(sides[i], name="base")
        head = dataclasses.replace(sides[i + 1], name="head")
        steps.append(
            paired.Report(
                [base, head],
                settings,
                results,
                skipped,
                only,
                errors,
                seconds,
                {"base": hello.get(sides[i].name, {}), "head": hello.get(sides[i + 1].name, {})},
                cores[:jobs],
                lost,
                spent,
            )
        )
    per_side = [side_result(found, names, k) for k in range(len(sides))]
    progress(f"window: {seconds:g} s on {jobs} cores; {paired.time_spent(spent['phases'])}")
    return WindowReport(sides, settings, steps, per_side, seconds, hello, cores[:jobs], spent)


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


# --- a window of commits: built, measured block by block, recorded --------------------------------
@dataclass
class Link:
    """Two consecutive commits of a window and what was measured between them: ``report`` (the
    paired step, its sides those two commits) or None, for identical builds (nothing to measure);
    ``block``: the commits of the block that measured it, in ``block_seconds``."""

    base: str
    head: str
    built_from: dict | None
    report: paired.Report | None = None
    block: list = field(default_factory=list)
    block_seconds: float = 0.0


@dataclass
class Pass:
    """A window measured: its commits as given (oldest first; one listed twice is measured twice,
    an A/A), each adjacent pair's :class:`Link`, what each commit measured (:class:`SideResult`,
    one per commit, pooled over the blocks that timed its build), each commit's first worker's
    hello, and the seconds spent building and measuring."""

    revs: list
    commits: list
    links: list
    per_commit: list
    hello: list
    build_seconds: float
    seconds: float
    blocks: list  # [(commits of the block, WindowReport)]
    envs: dict = field(default_factory=dict)  # commit -> its environment's record


def runs_of_builds(repo, commits, bindings):
    """The window's commits in runs of identical builds (``compare.identical``: consecutive
    different commits whose packages build the same wheels share one build and are never measured
    against each other); a commit listed twice in a row is two runs, an A/A. [[index, ...]]."""
    runs = [[0]]
    for k in range(1, len(commits)):
        a, b = commits[k - 1], commits[k]
        if a != b and compare.identical(compare.built_from(repo, a, b, bindings)):
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


def measure_commits(
    repo,
    revs,
    *,
    bindings,
    requirements=(),
    system_site=None,
    settings=None,
    bench=(),
    thresholds=None,
    log_dir,
    progress=None,
    block=BLOCK,
    cores=None,
):
    """Build ``revs`` (oldest first; through the wheel cache) and measure them in one pass, block by
    block (:func:`blocks`): a :class:`Pass`."""
    progress = progress or (lambda m: print(m, file=sys.stderr, flush=True))
    settings = settings or paired.Settings()
    names = compare.case_names(bench, settings.benchmark_dir)
    commits = [trees.resolve(repo, rev) for rev in revs]
    begun = time.monotonic()
    envs = compare.environments(
        repo, list(dict.fromkeys(commits)), bindings, requirements, system_site, log_dir, progress
    )
    return measure_built(
        repo,
        revs,
        {commit: envs[commit] for commit in commits},
        bindings=bindings,
        settings=settings,
        names=names,
        thresholds=thresholds,
        log_dir=log_dir,
        progress=progress,
        block=block,
        cores=cores,
        build_seconds=round(time.monotonic() - begun, 1),
        make_worker=paired.Worker,
    )


def measure_built(
    repo,
    revs,
    envs,
    *,
    bindings,
    settings,
    names,
    thresholds,
    log_dir,
    progress,
    block,
    cores,
    build_seconds,
    make_worker=paired.Worker,
):
    """:func:`measure_commits` once each commit has its environment (``envs``: {commit: its
    record, whose ``python`` runs it})."""
    begun = time.monotonic()
    commits = [trees.resolve(repo, rev) for rev in revs]
    runs = runs_of_builds(repo, commits, bindings)
    sides = [
        paired.Side(
            f"commit{r}",
            revs[run[0]],
            commits[run[0]],
            envs[commits[run[0]]]["python"],
            record=envs[commits[run[0]]],
        )
        for r, run in enumerate(runs)
    ]
    measured = []
    for b, part in enumerate(blocks(list(range(len(sides))), block)):
        progress(
            f"window: block {b + 1}: "
            + " ".join(sides[r].commit[:9] for r in part)
            + f" ({len(part)} builds)"
        )
        report = run(
            [sides[r] for r in part],
            names,
            settings,
            Path(log_dir) / f"block{b + 1}",
            thresholds,
            progress,
            cores,
            make_worker,
        )
        measured.append((part, report))
    run_of = {k: r for r, run_ in enumerate(runs) for k in run_}
    links = []
    for k in range(len(commits) - 1):
        link = Link(
            commits[k],
            commits[k + 1],
            compare.built_from(repo, commits[k], commits[k + 1], bindings),
        )
        ra, rb = run_of[k], run_of[k + 1]
        if ra != rb:
            part, report = next((p, w) for p, w in measured if ra in p and rb in p)
            step = report.steps[part.index(ra)]
            base = dataclasses.replace(step.sides[0], rev=revs[k], commit=commits[k])
            head = dataclasses.replace(step.sides[1], rev=revs[k + 1], commit=commits[k + 1])
            link.report = dataclasses.replace(step, sides=[base, head])
            link.block = [sides[r].commit for r in part]
            link.block_seconds = report.seconds
        links.append(link)
    per_commit, hello = [], []
    for k in range(len(commits)):
        pooled, said = SideResult(), {}
        for part, report in measured:
            if run_of[k] not in part:
                continue
            found = report.per_side[part.index(run_of[k])]
            for name, samples in found.samples.items():
                pooled.samples.setdefault(name, []).extend(samples)
                pooled.calls.setdefault(name, found.calls[name])
            pooled.skipped |= found.skipped
            pooled.errors |= found.errors
            said = said or report.workers.get(sides[run_of[k]].name) or {}
        pooled.skipped = {n: w for n, w in pooled.skipped.items() if n not in pooled.samples}
        pooled.errors = {n: w for n, w in pooled.errors.items() if n not in pooled.samples}
        per_commit.append(pooled)
        hello.append(said)
    return Pass(
        list(revs),
        commits,
        links,
        per_commit,
        hello,
        build_seconds,
        round(time.monotonic() - begun, 1),
        [([sides[r].commit for r in part], report) for part, report in measured],
        envs,
    )


def step_records(measured, repo, *, bindings, settings, command, info):
    """The step record of each :class:`Link` of a :class:`Pass` (``compare.summary``'s, as a paired
    step's): identical builds as ``compare.identical_summary`` has them, a measured one with
    ``window`` saying which pass and block measured it; its ``seconds`` are its share of its
    block's."""
    tags = asvrun.release_tags(repo)
    out = []
    for link in measured.links:
        release_tags = (
            [tags[link.base], tags[link.head]] if link.base in tags and link.head in tags else None
        )
        if link.report is None:
            data = compare.identical_summary(
                repo,
                link.base,
                link.head,
                "step",
                link.built_from,
                bindings,
                settings,
                command,
                info,
            )
        else:
            data = compare.summary(
                link.report, "step", (), None, command, info, link.built_from
            ) | {
                "bindings": bindings,
                "window": {
                    "commits": measured.commits,
                    "block": link.block,
                    "seconds": link.block_seconds,
                },
            }
            data["seconds"] = round(link.block_seconds / max(1, len(link.block) - 1), 1)
        out.append(data | {"release_tags": release_tags})
    return out


def build_record(env_record, conf_env):
    """``builds.jsonl``'s record of a commit from its environment's record (``build.environment``),
    as ``asvrun.record_builds`` writes one for an asv environment: ``conf_env`` is asv's
    environment of the results (its ``hashname``, ``env_vars``, ``python``)."""
    row = dict(env_record["build"])
    row.update(
        installed=env_record.get("installed"),
        python=conf_env.python,
        env_vars=conf_env.env_vars,
        env=conf_env.hashname,
    )
    return row


def record(measured, found, repo, *, conf_path, machine_name, results_dir, out, before=()):
    """Keep a :class:`Pass` in the history of ``results_dir/machine_name``: each step's record of
    ``found`` (:func:`step_records`; its summary.json first, under ``out``), each commit's asv
    results file (but those of ``before``, commits the history has measured already: a window adds
    to their steps, not to their numbers), each commit's build, and what the pages say of it
    (commits.json). A window that lists a commit twice (an A/A) is never kept. Whether every record
    was written."""
    if len(set(measured.commits)) < len(measured.commits):
        raise ValueError(
            "a window that lists a commit twice is an A/A: the history does not keep it"
        )
    folder = Path(results_dir) / machine_name
    ok = True
    for data in found:
        where = f"{data['base'][:12]}-{data['head'][:12]}"
        here = Path(out) / "steps" / where
        compare.write(here, data)
        ok &= steps.record_or_say(
            folder,
            "step",
            data,
            here / "summary.json",
            f"step {data['base'][:9]} -> {data['head'][:9]}",
        )
    env = results.asv_environment(conf_path)
    asvrun.keep_builds(folder, [build_record(measured.envs[c], env) for c in measured.commits])
    described, _ = asvrun.describe_commits(repo, measured.commits)
    suite = results.asv_suite(conf_path)
    for commit, side in zip(measured.commits, measured.per_commit):
        if side.samples and commit not in before:
            results.save_asv(
                conf_path,
                suite,
                machine_name,
                commit,
                described.get(commit, {}).get("date"),
                side.samples,
                side.calls,
                side.skipped,
            )
    asvrun.record_commits(repo, measured.commits, Path(results_dir) / COMMITS.name)
    return ok


def write(out, measured, found):
    """A :class:`Pass` kept in ``out`` alone (a proof, an A/A): each step's summary.json and
    summary.md under ``steps/``, and ``window.json``: the commits, the step records, and per commit
    the median time per call of each case, with its samples' count."""
    out = Path(out)
    for i, data in enumerate(found):
        compare.write(out / "steps" / f"{i + 1:02d}-{data['base'][:9]}-{data['head'][:9]}", data)
    per_commit = [
        {
            "commit": commit,
            "median_ns": {n: round(statistics.median(v), 2) for n, v in side.samples.items()},
            "samples": {n: len(v) for n, v in side.samples.items()},
            "skipped": side.skipped,
            "errors": side.errors,
        }
        for commit, side in zip(measured.commits, measured.per_commit)
    ]
    process.write_whole(
        out / "window.json",
        records.json.dumps(
            {
                "commits": measured.commits,
                "revs": measured.revs,
                "seconds": measured.seconds,
                "build_seconds": measured.build_seconds,
                "blocks": [commits for commits, _ in measured.blocks],
                "steps": found,
                "per_commit": per_commit,
            },
            indent=1,
        )
        + "\n",
    )


# --- a window into the history --------------------------------------------------------------------
def with_edges(commits, line, measured):
    """``commits`` with the commit of ``line`` (oldest first: main's first-parent history, or the
    release ladder) just before the first of them, and the one just after the last, where that
    neighbour is measured and not in ``commits`` already: the new commits are then paired with
    their measured neighbours. A neighbour not yet measured is left to the window that measures it
    (a window never pairs two commits that have another between them)."""
    if not commits or commits[0] not in line or commits[-1] not in line:
        return list(commits)
    first, last = line.index(commits[0]), line.index(commits[-1])
    before = line[first - 1] if first > 0 and line[first - 1] in measured else None
    after = line[last + 1] if last + 1 < len(line) and line[last + 1] in measured else None
    return (
        ([before] if before and before not in commits else [])
        + list(commits)
        + ([after] if after and after not in commits else [])
    )


def step_lines(found):
    """What a window's step records say, a line per step and one per case that changed."""
    lines = []
    for data in found:
        where = f"{data['base'][:9]} -> {data['head'][:9]}"
        if data.get("identical"):
            lines.append(f"step {where}: identical builds, nothing to measure")
            continue
        verdicts = [c["verdict"] for c in paired.counted(data)]
        lines.append(
            f"step {where}: {verdicts.count('regression')} slower, "
            f"{verdicts.count('improvement')} faster, {verdicts.count('same')} same"
            + (f", {len(data['errors'])} not measured" if data["errors"] else "")
        )
        lines += [
            f"  {c['verdict']}: {c['name']} {interval(c)}"
            for c in paired.counted(data)
            if c["verdict"] != "same"
        ]
    return lines


def status_of(found):
    """A window's exit status from its step records: REGRESSION when a step flagged a case, else
    INCOMPLETE when a case was not measured (or lost process pairs), else OK."""
    flagged = any(paired.regressions(d) for d in found)
    incomplete = any(d["errors"] or d.get("lost") for d in found)
    return worst([REGRESSION if flagged else OK, INCOMPLETE if incomplete else OK])


def into_history(
    repo,
    commits,
    *,
    conf,
    config,
    machine_name,
    info,
    results_dir,
    settings,
    command,
    line,
    bench=(),
    block=BLOCK,
    counts=True,
    cupti=(),
    edges=True,
    progress,
):
    """``commits`` (oldest first) measured in one pass and kept in the history of
    ``results_dir/machine_name`` (:func:`record`), with the measured commits of ``line`` around
    them (:func:`with_edges`) unless ``edges`` is False; then the work per call of each commit not
    yet counted (``countpass.record_commits``). (exit status, the :class:`Pass`)."""
    bindings = asvrun.bindings_of(conf)
    before = history.measured_in(results_dir, machine_name, conf)
    if edges:
        commits = with_edges(commits, line, before)
    if not commits:
        raise asvrun.RunError("a window needs a commit (a range such as HEAD~5..HEAD)")
    progress(f"window: {len(commits)} commits, oldest first: " + " ".join(c[:9] for c in commits))
    out = WORK / "windows" / time.strftime("%Y%m%dT%H%M%S")
    measured = measure_commits(
        repo,
        commits,
        bindings=bindings,
        requirements=asvrun.requirements(conf),
        system_site=asvrun.system_site_of(conf),
        settings=settings,
        bench=bench,
        thresholds=records.calibration(Path(results_dir) / machine_name),
        log_dir=out / "logs",
        progress=progress,
        block=block,
    )
    found = step_records(
        measured, repo, bindings=bindings, settings=settings, command=command, info=info
    )
    for text in step_lines(found):
        progress(text)
    kept = record(
        measured,
        found,
        repo,
        conf_path=config,
        machine_name=machine_name,
        results_dir=results_dir,
        out=out,
        before=before,
    )
    statuses = [status_of(found), OK if kept else INCOMPLETE]
    counted = history.work(results_dir, machine_name)
    new = [c for c in dict.fromkeys(measured.commits) if c not in counted]
    if counts and new:
        statuses.append(
            countpass.record_commits(
                repo,
                new,
                conf=conf,
                machine_name=machine_name,
                info=info,
                results_dir=results_dir,
                cupti=cupti,
                command=command,
                progress=progress,
            )
        )
    progress(
        f"window: {len(found)} steps and {len(measured.commits)} commits in "
        f"{Path(results_dir) / machine_name}; measured in {measured.seconds:g} s after "
        f"{measured.build_seconds:g} s of environments"
    )
    return worst(statuses), measured
