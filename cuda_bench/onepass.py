"""Stage 4, compare: commits measured in one pass (``cuda_bench.window``, the engine): each built
into an environment of its own through the wheel cache, consecutive identical builds sharing one, a
long window measured in blocks that share their edge commit; each adjacent pair's step record, each
commit's asv results file, its build and what the pages say of it, kept in the history
(:func:`into_history`, with the measured commits around the window) or in a folder (:func:`write`).
"""

from __future__ import annotations

import dataclasses
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
    instrpass,
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
from cuda_bench.window import BLOCK, SideResult, blocks, run


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


def measure_as(conf, repo, commits, *, calibrated, settings, bench, log_dir, progress, block):
    """:func:`measure_commits` as asv's derived config ``conf`` builds (its cuda-bindings, its
    requirements, its system site), each step judged by the thresholds calibrated in the machine's
    folder ``calibrated``."""
    return measure_commits(
        repo,
        commits,
        bindings=asvrun.bindings_of(conf),
        requirements=asvrun.requirements(conf),
        system_site=asvrun.system_site_of(conf),
        settings=settings,
        bench=bench,
        thresholds=records.calibration(calibrated),
        log_dir=log_dir,
        progress=progress,
        block=block,
    )


def into_folder(
    conf, repo, commits, out, *, calibrated, settings, bench, block, command, info, progress
):
    """``commits`` measured in one pass (:func:`measure_as`) and kept in ``out`` alone
    (:func:`write`, the workers' logs under ``out/logs``), not in the history: (the :class:`Pass`,
    its step records)."""
    measured = measure_as(
        conf,
        repo,
        commits,
        calibrated=calibrated,
        settings=settings,
        bench=bench,
        log_dir=Path(out) / "logs",
        progress=progress,
        block=block,
    )
    found = step_records(
        measured,
        repo,
        bindings=asvrun.bindings_of(conf),
        settings=settings,
        command=command,
        info=info,
    )
    write(out, measured, found)
    return measured, found


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
            revs[run_[0]],
            commits[run_[0]],
            envs[commits[run_[0]]]["python"],
            record=envs[commits[run_[0]]],
        )
        for r, run_ in enumerate(runs)
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
    instructions=True,
    progress,
):
    """``commits`` (oldest first) measured in one pass and kept in the history of
    ``results_dir/machine_name`` (:func:`record`), with the measured commits of ``line`` around
    them (:func:`with_edges`) unless ``edges`` is False; then each commit's work and instructions
    per call not yet counted (:func:`count_new`, :func:`instructions_new`). (status, the Pass)."""
    bindings = asvrun.bindings_of(conf)
    before = history.measured_in(results_dir, machine_name, conf)
    if edges:
        commits = with_edges(commits, line, before)
    if not commits:
        raise asvrun.RunError("a window needs a commit (a range such as HEAD~5..HEAD)")
    progress(f"window: {len(commits)} commits, oldest first: " + " ".join(c[:9] for c in commits))
    out = WORK / "windows" / time.strftime("%Y%m%dT%H%M%S")
    measured = measure_as(
        conf,
        repo,
        commits,
        calibrated=Path(results_dir) / machine_name,
        settings=settings,
        bench=bench,
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
    passes = [(count_new, {"cupti": cupti})] * counts + [(instructions_new, {})] * instructions
    for counted, options in passes:
        statuses.append(
            counted(
                repo,
                measured.commits,
                conf=conf,
                machine_name=machine_name,
                info=info,
                results_dir=results_dir,
                command=command,
                progress=progress,
                **options,
            )
        )
    progress(
        f"window: {len(found)} steps and {len(measured.commits)} commits in "
        f"{Path(results_dir) / machine_name}; measured in {measured.seconds:g} s after "
        f"{measured.build_seconds:g} s of environments"
    )
    return worst(statuses), measured


def count_new(repo, commits, *, results_dir, machine_name, progress, **options):
    """The work per call of each of ``commits`` the history of ``results_dir/machine_name`` has not
    counted (``countpass.record_commits``, several at once): its exit status."""
    counted = history.work(results_dir, machine_name)
    new = [c for c in dict.fromkeys(commits) if c not in counted]
    if not new:
        return OK
    return countpass.record_commits(
        repo,
        new,
        results_dir=results_dir,
        machine_name=machine_name,
        progress=progress,
        **options,
    )


def instructions_new(repo, commits, *, results_dir, machine_name, progress, **options):
    """The instructions per call of each of ``commits`` the history of ``results_dir/machine_name``
    has not counted (``instrpass.record_commits``): its exit status."""
    counted = history.instructions(results_dir, machine_name)
    new = [c for c in dict.fromkeys(commits) if c not in counted]
    if not new:
        return OK
    return instrpass.record_commits(
        repo,
        new,
        results_dir=results_dir,
        machine_name=machine_name,
        progress=progress,
        **options,
    )
