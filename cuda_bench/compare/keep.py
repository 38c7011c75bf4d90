"""Stage 4, compare: a one-pass window (``cuda_bench.compare.onepass``) kept as it is measured,
block by block: into the history of a machine (:func:`into_history`: each step's record, each new
commit's asv results file, its build, what the pages say of it, then its work and instructions per
call) or into a folder (:func:`into_folder`: a proof, an A/A, a bisect's round). A block is written
as soon as it is measured, so a call cut at its time limit keeps every block it finished; the same
command run again measures only the blocks not kept yet, and says how many were.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from cuda_bench.build import trees
from cuda_bench.compare import countpass, gate, instrpass, onepass, paired, steps, summaries
from cuda_bench.foundations import process
from cuda_bench.foundations.paths import COMMITS, WORK
from cuda_bench.foundations.status import INCOMPLETE, OK, REGRESSION, worst
from cuda_bench.foundations.text import interval
from cuda_bench.results import asv_files, history, records
from cuda_bench.run import asvrun


@dataclass
class Kept:
    """A window as kept: its commits (oldest first), each adjacent pair's step record, the seconds
    this run spent measuring and building, and how many of its blocks an earlier run had kept."""

    commits: list
    found: list
    seconds: float
    build_seconds: float
    blocks: int
    reused: int


def measure_kept(conf, repo, commits, done, keep_part, *, log_dir, progress, **how):
    """Measure the blocks of ``commits`` (:func:`onepass.parts_of`) that ``done(part)`` says are
    not kept yet, handing each to ``keep_part(part, Pass, found)`` as it ends (``found``: its step
    records, made with ``how``'s ``command`` and ``info``). (the parts, how many were kept already,
    the seconds building, the seconds measuring)."""
    command, info, block = how.pop("command"), how.pop("info"), how["block"]
    settings = how["settings"]
    bindings = asvrun.bindings_of(conf)
    parts = onepass.parts_of(repo, commits, bindings, block)
    todo = [part for part in parts if not done(part)]
    if len(todo) < len(parts):
        progress(
            f"window: {len(parts) - len(todo)} of {len(parts)} blocks already measured"
            + (f"; measuring the other {len(todo)}" if todo else ": nothing to measure")
        )
    spent = []

    def kept(k, measured):
        spent.append(measured.seconds)
        found = onepass.step_records(
            measured, repo, bindings=bindings, settings=settings, command=command, info=info
        )
        keep_part(todo[k], measured, found)

    build_seconds = onepass.measure_parts(
        conf,
        repo,
        commits,
        todo,
        log_dir=log_dir,
        progress=progress,
        kept=kept,
        numbers=[(parts.index(part) + 1, len(parts)) for part in todo],
        **how,
    )
    return parts, len(parts) - len(todo), build_seconds, round(sum(spent), 1)


# --- into a folder --------------------------------------------------------------------------------
def into_folder(
    conf, repo, commits, out, *, calibrated, settings, bench, block, command, info, progress
):
    """``commits`` measured in one pass and kept in ``out`` alone, not in the history: each block
    in ``out/blocks/NN`` (:func:`write`) as it ends, then the whole window (``window.json``,
    ``steps/``) from the blocks' files; a block whose folder holds its commits already is not
    measured again. The workers' logs go under ``out/logs``. A :class:`Kept`."""
    out = Path(out)
    commits = [trees.resolve(repo, rev) for rev in commits]

    def folder(part):
        return out / "blocks" / f"{part[0] + 1:02d}-{commits[part[0]][:9]}-{commits[part[-1]][:9]}"

    asked = what_was_asked(bench, settings)

    def keep_part(part, measured, found):
        write(folder(part), measured, found, asked)
        progress(f"window: block of {len(part)} commits kept in {folder(part)}")

    parts, reused, build_seconds, seconds = measure_kept(
        conf,
        repo,
        commits,
        lambda part: written(folder(part), [commits[i] for i in part], asked),
        keep_part,
        calibrated=calibrated,
        settings=settings,
        bench=bench,
        block=block,
        command=command,
        info=info,
        log_dir=out / "logs",
        progress=progress,
    )
    found = write_whole_window(out, commits, [folder(part) for part in parts])
    return Kept(commits, found, seconds, build_seconds, len(parts), reused)


#: the settings that decide what a block measured: a block measured with others is measured again
ASKED = (
    "pairs",
    "seconds",
    "sample_ns",
    "min_groups",
    "max_groups",
    "layouts",
    "confidence",
    "cold_pairs",
    "first_context_pairs",
)


def what_was_asked(bench, settings):
    """What a block was measured for: the cases asked (``--bench``) and the settings of
    :data:`ASKED`."""
    return {
        "bench": sorted(bench or []),
        "settings": {key: getattr(settings, key, None) for key in ASKED},
    }


def written(folder, commits, asked):
    """Whether ``folder`` holds a block of ``commits`` written whole (its ``window.json`` comes
    last) for the same cases and settings (``asked``: :func:`what_was_asked`)."""
    try:
        block = json.loads((Path(folder) / "window.json").read_text())
        return block["commits"] == commits and block.get("asked") == asked
    except (OSError, ValueError, KeyError):
        return False


def write_whole_window(out, commits, folders):
    """``out/window.json`` and ``out/steps/`` of a window from its blocks' folders (oldest first):
    the step records in order, and per commit what the first block that timed it measured. The
    step records."""
    blocks = [json.loads((Path(f) / "window.json").read_text()) for f in folders]
    found = [data for block in blocks for data in block["steps"]]
    per_commit = {}
    for block in blocks:
        for entry in block["per_commit"]:
            per_commit.setdefault(entry["commit"], entry)
    for i, data in enumerate(found):
        summaries.write(out / "steps" / f"{i + 1:02d}-{data['base'][:9]}-{data['head'][:9]}", data)
    whole = {
        "commits": commits,
        "revs": commits,
        "seconds": round(sum(b["seconds"] for b in blocks), 1),
        "build_seconds": round(sum(b["build_seconds"] for b in blocks), 1),
        "blocks": [b["commits"] for b in blocks],
        "steps": found,
        "per_commit": [per_commit[c] for c in dict.fromkeys(commits) if c in per_commit],
    }
    process.write_whole(out / "window.json", records.json.dumps(whole, indent=1) + "\n")
    return found


def write(out, measured, found, asked=None):
    """A block (a :class:`onepass.Pass`) kept in ``out`` alone: each step's summary.json and
    summary.md under ``steps/``, and ``window.json``, written last: the commits, the step records,
    per commit the median time per call of each case, with its samples' count, and what it was
    measured for (``asked``: :func:`what_was_asked`)."""
    out = Path(out)
    for i, data in enumerate(found):
        summaries.write(out / "steps" / f"{i + 1:02d}-{data['base'][:9]}-{data['head'][:9]}", data)
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
                "asked": asked,
            },
            indent=1,
        )
        + "\n",
    )


# --- into the history -----------------------------------------------------------------------------
def build_record(env_record, conf_env):
    """``builds.jsonl``'s record of a commit from its environment's record
    (``environment.environment``), as ``asvrun.record_builds`` writes one for an asv environment:
    ``conf_env`` is asv's environment of the results (its ``hashname``, ``env_vars``,
    ``python``)."""
    row = dict(env_record["build"])
    row.update(
        installed=env_record.get("installed"),
        python=conf_env.python,
        env_vars=conf_env.env_vars,
        env=conf_env.hashname,
    )
    return row


def record(measured, found, repo, *, conf_path, machine_name, results_dir, out, before=()):
    """Keep a block (a :class:`onepass.Pass`) in the history of ``results_dir/machine_name``: each
    step's record of ``found`` (its summary.json first, under ``out``), and of each commit not in
    ``before`` (those the history has measured already: a window adds to their steps, not to their
    records) its asv results file, its build and what the pages say of it (commits.json); of a
    commit in ``before``, only the cases its asv results file lacks (a case an earlier window
    lost) and each package tree it compiled again (``compiles.jsonl``). A block that lists a
    commit twice (an A/A) is never kept. Whether every record was written."""
    if len(set(measured.commits)) < len(measured.commits):
        raise ValueError(
            "a window that lists a commit twice is an A/A: the history does not keep it"
        )
    folder = Path(results_dir) / machine_name
    ok = True
    for data in found:
        where = f"{data['base'][:12]}-{data['head'][:12]}"
        here = Path(out) / "steps" / where
        summaries.write(here, data)
        ok &= steps.record_or_say(
            folder,
            "step",
            data,
            here / "summary.json",
            f"step {data['base'][:9]} -> {data['head'][:9]}",
        )
    new = [c for c in dict.fromkeys(measured.commits) if c not in before]
    env = asv_files.asv_environment(conf_path)
    asvrun.keep_builds(folder, [build_record(measured.envs[c], env) for c in new])
    # an edge's builds.jsonl row stays; a tree it compiled again (an empty wheel cache) is a
    # compile of its own, as every rebuild is
    edges = [c for c in dict.fromkeys(measured.commits) if c in before]
    asvrun.keep_compiles(folder, [build_record(measured.envs[c], env) for c in edges])
    described, _ = asvrun.describe_commits(repo, measured.commits)
    suite = asv_files.asv_suite(conf_path)
    for commit, side in zip(measured.commits, measured.per_commit):
        if side.samples:
            asv_files.save_asv(
                conf_path,
                suite,
                machine_name,
                commit,
                described.get(commit, {}).get("date"),
                side.samples,
                side.calls,
                side.skipped,
                only_missing=commit in before,
            )
    asvrun.record_commits(repo, new, Path(results_dir) / COMMITS.name)
    return ok


def stepped(results_dir, machine_name, bindings, names):
    """{(base, head)} of the history's steps in ``bindings``' environment that measured every case
    of ``names`` (or paired identical builds): a step of a few cases (``-b``), or one that could not
    measure some, is measured again."""
    out = set()
    for step in history.steps(results_dir, machine_name):
        if step.get("bindings", bindings) != bindings:
            continue
        said = {c["name"] for c in step["cases"]} | set(step["skipped"]) | set(step["only"])
        if step.get("identical") or (not step["errors"] and set(names) <= said):
            out.add((step["base"], step["head"]))
    return out


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
    block=onepass.BLOCK,
    counts=True,
    cupti=(),
    edges=True,
    instructions=True,
    progress,
):
    """``commits`` (oldest first) measured in one pass and kept in the history of
    ``results_dir/machine_name``, block by block as each ends (:func:`record`), with the measured
    commits of ``line`` around them (:func:`onepass.with_edges`) unless ``edges`` is False; a
    block whose steps and commits the history holds already is not measured again. Then the work
    and the instructions per call of each commit not yet counted (:func:`count_new`,
    :func:`instructions_new`) unless ``counts`` or ``instructions`` is False. (exit status, a
    :class:`Kept`)."""
    before = set(history.measured_in(results_dir, machine_name, conf))
    if edges:
        commits = onepass.with_edges(commits, line, before)
    if not commits:
        raise asvrun.RunError("a window needs a commit (a range such as HEAD~5..HEAD)")
    commits = [trees.resolve(repo, rev) for rev in commits]
    progress(f"window: {len(commits)} commits, oldest first: " + " ".join(c[:9] for c in commits))
    out = WORK / "windows" / time.strftime("%Y%m%dT%H%M%S")
    into = Into(repo, commits, config, Path(results_dir) / machine_name, before, out, progress)
    names = gate.case_names(bench, settings.benchmark_dir)
    into.have = stepped(results_dir, machine_name, asvrun.bindings_of(conf), names)
    parts, reused, build_seconds, seconds = measure_kept(
        conf,
        repo,
        commits,
        into.done,
        into.keep_part,
        calibrated=Path(results_dir) / machine_name,
        settings=settings,
        bench=bench,
        block=block,
        command=command,
        info=info,
        log_dir=out / "logs",
        progress=progress,
    )
    statuses = into.statuses
    passes = [(count_new, {"cupti": cupti})] * counts + [(instructions_new, {})] * instructions
    for counted, options in passes:
        statuses.append(
            counted(
                repo,
                commits,
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
        f"window: {len(into.found)} steps and {len(commits)} commits in "
        f"{Path(results_dir) / machine_name}; measured in {seconds:g} s after "
        f"{build_seconds:g} s of environments"
    )
    return worst(statuses), Kept(commits, into.found, seconds, build_seconds, len(parts), reused)


class Into:
    """A window's blocks kept in the history folder ``folder`` (``results/<machine>``) as each
    ends: which blocks it holds already (:meth:`done`), and each block's records (:meth:`keep_part`,
    :func:`record`), the step records and exit statuses so far."""

    def __init__(self, repo, commits, config, folder, before, out, progress):
        self.repo, self.commits, self.config, self.folder = repo, commits, config, Path(folder)
        self.before, self.out, self.progress = before, out, progress
        self.have, self.found, self.statuses = set(), [], []

    def done(self, part):
        """Whether the history holds every commit of ``part`` and the step of each adjacent pair."""
        revs = [self.commits[i] for i in part]
        return all(c in self.before for c in revs) and all(
            pair in self.have for pair in zip(revs, revs[1:])
        )

    def keep_part(self, part, measured, found):
        for text in step_lines(found):
            self.progress(text)
        kept = record(
            measured,
            found,
            self.repo,
            conf_path=self.config,
            machine_name=self.folder.name,
            results_dir=self.folder.parent,
            out=self.out,
            before=self.before,
        )
        self.before.update(measured.commits)
        self.found.extend(found)
        self.statuses.extend([status_of(found), OK if kept else INCOMPLETE])
        self.progress(f"window: block of {len(part)} commits kept in {self.folder}")


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


# --- what a window says ---------------------------------------------------------------------------
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
