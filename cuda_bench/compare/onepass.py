"""Stage 4, compare: commits measured in one pass (``cuda_bench.compare.window``, the engine): each
built into an environment of its own through the wheel cache, consecutive identical builds sharing
one, a long window measured in blocks that share their edge commit (:func:`parts_of`), one pass a
block; each adjacent pair's step record (:func:`step_records`), and the measured commits of main
around a window (:func:`with_edges`). ``cuda_bench.compare.keep`` writes each block as it is
measured.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from pathlib import Path

from cuda_bench.build import trees
from cuda_bench.compare import gate, paired, summaries
from cuda_bench.compare.window import BLOCK, SideResult, blocks, run
from cuda_bench.results import records
from cuda_bench.run import asvrun


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
    """The window's commits in runs of identical builds (``summaries.identical``: consecutive
    different commits whose packages build the same wheels share one build and are never measured
    against each other); a commit listed twice in a row is two runs, an A/A. [[index, ...]]."""
    runs = [[0]]
    for k in range(1, len(commits)):
        a, b = commits[k - 1], commits[k]
        if a != b and summaries.identical(summaries.built_from(repo, a, b, bindings)):
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


def parts_of(repo, commits, bindings, block=BLOCK):
    """The window's commits as its blocks measure them: one list of indices into ``commits`` per
    block (:func:`window.blocks` of its builds), consecutive blocks sharing one commit (the last of
    the build they share), so that every adjacent pair of commits is in exactly one block."""
    runs = runs_of_builds(repo, commits, bindings)
    out = []
    for part in blocks(list(range(len(runs))), block):
        start = runs[part[0]][-1] if out else runs[part[0]][0]
        out.append(list(range(start, runs[part[-1]][-1] + 1)))
    return out


def measure_parts(
    conf,
    repo,
    commits,
    parts,
    *,
    calibrated,
    settings,
    bench,
    log_dir,
    progress,
    block,
    kept,
    numbers=None,
):
    """Build every environment ``parts`` (lists of indices into ``commits``, :func:`parts_of`)
    needs at once, through the wheel cache, as asv's derived config ``conf`` builds them; then
    measure each part in a pass of its own, judged by the thresholds calibrated in the machine's
    folder ``calibrated``, and hand it to ``kept(k, Pass)`` before the next part begins: what a
    part measured is written even where a later part never ends (a call cut at its time limit).
    ``numbers``: each part's (block number, blocks in the window) for the progress line, where
    ``parts`` are what is left of a longer window (default: ``parts`` are the window). The
    seconds spent building."""
    needed = list(dict.fromkeys(commits[i] for part in parts for i in part))
    if not needed:
        return 0.0
    bindings = asvrun.bindings_of(conf)
    names = gate.case_names(bench, settings.benchmark_dir)
    begun = time.monotonic()
    envs = gate.environments(
        repo,
        needed,
        bindings,
        asvrun.requirements(conf),
        asvrun.system_site_of(conf),
        log_dir,
        progress,
    )
    build_seconds = round(time.monotonic() - begun, 1)
    thresholds = records.calibration(calibrated, "window")
    for k, part in enumerate(parts):
        revs = [commits[i] for i in part]
        kept(
            k,
            measure_built(
                repo,
                revs,
                {commit: envs[commit] for commit in revs},
                bindings=bindings,
                settings=settings,
                names=names,
                thresholds=thresholds,
                log_dir=Path(log_dir) / f"part{k + 1}",
                progress=progress,
                block=block,
                cores=None,
                build_seconds=build_seconds if k == 0 else 0.0,
                numbered=numbers[k] if numbers else (k + 1, len(parts)),
            ),
        )
    return build_seconds


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
    numbered=None,
):
    """The measuring of :func:`measure_parts` once each commit has its environment (``envs``:
    {commit: its record, whose ``python`` runs it}); ``numbered``: (this part's block number, the
    window's blocks), for the progress line, where the window is measured in several parts."""
    begun = time.monotonic()
    commits = [trees.resolve(repo, rev) for rev in revs]
    runs = runs_of_builds(repo, commits, bindings)
    sides = [
        paired.Side(
            f"commit{r}",
            revs[run_[0]],
            commits[run_[0]],
            envs[commits[run_[0]]]["python"],
            record=envs[commits[run_[0]]],
        )
        for r, run_ in enumerate(runs)
    ]
    measured = []
    for b, part in enumerate(blocks(list(range(len(sides))), block)):
        number = f"{numbered[0] + b} of {numbered[1]}" if numbered else f"{b + 1}"
        progress(
            f"window: block {number}: "
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
    per_commit, hello = pooled(measured, sides, [run_of[k] for k in range(len(commits))])
    return Pass(
        list(revs),
        commits,
        links_of(repo, revs, commits, bindings, run_of, measured, sides),
        per_commit,
        hello,
        build_seconds,
        round(time.monotonic() - begun, 1),
        [([sides[r].commit for r in part], report) for part, report in measured],
        envs,
    )


def links_of(repo, revs, commits, bindings, run_of, measured, sides):
    """Each adjacent pair of ``commits`` as a :class:`Link`: the step of the block that measured
    their two builds, its sides renamed to the two commits; none between identical builds."""
    links = []
    for k in range(len(commits) - 1):
        link = Link(
            commits[k],
            commits[k + 1],
            summaries.built_from(repo, commits[k], commits[k + 1], bindings),
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
    return links


def pooled(measured, sides, side_of):
    """What each commit measured (``side_of``: the build of each commit, in order), pooled over the
    blocks that timed its build: ([SideResult], [its first worker's hello])."""
    per_commit, hello = [], []
    for r in side_of:
        found_all, said = SideResult(), {}
        for part, report in measured:
            if r not in part:
                continue
            found = report.per_side[part.index(r)]
            for name, samples in found.samples.items():
                found_all.samples.setdefault(name, []).extend(samples)
                found_all.calls.setdefault(name, found.calls[name])
            found_all.skipped |= found.skipped
            found_all.errors |= found.errors
            said = said or report.workers.get(sides[r].name) or {}
        found_all.skipped = {
            n: w for n, w in found_all.skipped.items() if n not in found_all.samples
        }
        found_all.errors = {n: w for n, w in found_all.errors.items() if n not in found_all.samples}
        per_commit.append(found_all)
        hello.append(said)
    return per_commit, hello


def step_records(measured, repo, *, bindings, settings, command, info):
    """The step record of each :class:`Link` of a :class:`Pass` (``summaries.summary``'s, as a
    paired step's): identical builds as ``summaries.identical_summary`` has them, a measured one
    with ``window`` saying which pass and block measured it; its ``seconds`` are its share of its
    block's."""
    tags = asvrun.release_tags(repo)
    out = []
    for link in measured.links:
        release_tags = (
            [tags[link.base], tags[link.head]] if link.base in tags and link.head in tags else None
        )
        if link.report is None:
            data = summaries.identical_summary(
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
            data = summaries.summary(
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
