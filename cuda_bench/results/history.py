"""Stage 3, results: the history of one machine, read from its results files and paired steps.

What was measured in which environment, which measured commits follow each other (the steps the
history has and lacks), a step's measurements merged into one verdict per case
(``stats.repeated_verdict``), the chain of paired ratios from a commit back to the first one the
steps reach, the release ladder's steps, and the work each call does at each counted commit.
"""

from __future__ import annotations

import collections
from pathlib import Path

from cuda_bench.foundations import stats
from cuda_bench.foundations.names import is_control, is_release_tag, library_of
from cuda_bench.foundations.paths import result_files
from cuda_bench.foundations.text import build_words
from cuda_bench.results import asv_files, records


def release_step(step):
    """Whether a history step pairs two cuda-core releases (the release ladder's steps): its
    ``release_tags`` name both commits' tags."""
    return bool(step.get("release_tags"))


#: the packages of an environment that come from wheels, not from the commits a step pairs;
#: cuda-bindings only where the step installed its wheel (``bindings`` not "source")
WHEELS = ("python", "cuda-bindings", "numpy", "cupy-cuda13x", "cupy-cuda12x")


def environment_change(step):
    """{package: (base's version, head's version)} of what changed between a step's sides without
    either commit changing it: a cuda-bindings wheel (``auto`` gives CUDA 12's to old releases and
    CUDA 13's to newer ones), Python, numpy, CuPy. Each side's versions as its workers reported them
    (``versions``)."""
    if "environment_change" in step:  # a merged step (:func:`merged_steps`) says it already
        return step["environment_change"]
    versions = step.get("versions") or {}
    base, head = versions.get("base") or {}, versions.get("head") or {}
    out = {}
    for package in WHEELS:
        if package == "cuda-bindings" and step.get("bindings") == "source":
            continue  # built from each commit: its change is the commits' own
        if base.get(package) != head.get(package) and base.get(package) and head.get(package):
            out[package] = (base[package], head[package])
    return out


def side_build(step, side):
    """Which cuda-bindings one side of a step ran, in the words every page uses
    (``text.build_words``): "built from the commit", "13.3.1 wheel"."""
    version = ((step.get("versions") or {}).get(side) or {}).get("cuda-bindings")
    return build_words(step.get("bindings"), version)


def family(step):
    """A step's build family: the cuda-bindings both its sides ran, in words (:func:`side_build`),
    or None where the two differ (a step across a wheel change, or from a wheel to cuda_bindings
    built from the commit). A paired chain multiplies the steps of one family only: a step across
    families measures the change of build as much as the commits'."""
    base, head = side_build(step, "base"), side_build(step, "head")
    return base if base == head else None


def installed_bindings(steps):
    """{(commit, cuda-bindings as asked: "source", "13.3.1", "auto"): the cuda-bindings version the
    step's workers reported on that side} of ``steps``: what a build of each commit actually ran."""
    out = {}
    for step in steps:
        for side in ("base", "head"):
            version = ((step.get("versions") or {}).get(side) or {}).get("cuda-bindings")
            if version:
                out[(step[side], step.get("bindings"))] = version
    return out


def attributed(step, case):
    """What a step's case is put down to when it is not the commits' own doing: "cuda-bindings
    12.9.10 → 13.3.1" for a cuda.bindings case of a step across a cuda-bindings wheel change
    (:func:`environment_change`); else None."""
    change = environment_change(step).get("cuda-bindings")
    if change and library_of(case["name"]) == "bindings":
        return f"cuda-bindings {change[0]} → {change[1]}"
    return None


def twin(step, steps):
    """Where ``step`` crosses a cuda-bindings wheel change (:func:`environment_change`): the step of
    ``steps`` that pairs the same two commits with one cuda-bindings on both sides, which tells the
    commits' own change apart from the wheel's; else None."""
    if "cuda-bindings" not in environment_change(step):
        return None
    return next(
        (
            other
            for other in steps
            if (other["base"], other["head"]) == (step["base"], step["head"])
            and other is not step
            and not identical(other)
            and "cuda-bindings" not in environment_change(other)
            and set((other.get("versions") or {}).get("base") or {}) >= {"cuda-bindings"}
        ),
        None,
    )


def judged(steps):
    """The steps whose verdicts stand: all but a step across a cuda-bindings change that has a
    :func:`twin` (the twin judges those commits; the step across the change is context)."""
    return [step for step in steps if twin(step, steps) is None]


def identical(step):
    """Whether a step paired identical builds (nothing measured:
    ``summaries.identical_summary``)."""
    return bool(step.get("identical"))


def work(results_dir, machine_name):
    """{commit: its counts records, oldest first} of one machine: the work each call does, counted
    per commit (``cuda-bench counts``; ``run`` counts each newly measured commit), perhaps in
    several environments or for some cases only (``summary.counted_at`` picks and merges)."""
    return work_of(records.read(Path(results_dir) / machine_name, "counts"))


def instructions(results_dir, machine_name):
    """{commit: its instruction records, oldest first} of one machine (``cuda-bench counts``;
    ``run`` and ``window`` count each newly measured commit where valgrind is found)."""
    return work_of(records.read(Path(results_dir) / machine_name, "instructions"))


def work_of(counts_records):
    """:func:`work` of counts records already read."""
    out = {}
    for found in counts_records:
        out.setdefault(found["commit"], []).append(found)
    return out


def steps(results_dir, machine_name):
    """The history's paired steps of one machine, one per (base, head, cuda-bindings), in the order
    they were first made: the same two commits paired in another environment are another step.

    A step measured again (``cuda-bench steps --recheck`` measures its flagged cases on another
    machine start) keeps its first record's fields but these: ``errors`` names the cases no record
    measured (the newest record's text), ``lost`` the cases whose shown measurement lost process
    pairs (``paired.kept``), ``seconds`` and ``build_seconds`` add up. Each case takes the numbers
    of its newest measurement (of a regression: its newest flag) and adds:

    * ``measurements``: every measurement of the case, oldest first, each with its ``start`` (the
      record's ``host.start``), ``boot`` (when that start booted), ``date``, ``layouts``, ratio,
      interval and verdict;
    * the ``verdict`` that all of them give together, and ``confirmed``
      (``stats.repeated_verdict``);
    * of a case "not reproduced": its numbers are those of the flag it was (the newest), and
      ``cleared_by`` the measurement that cleared it (``stats.clearing``; the newest of those), as
      in ``measurements``.

    ``rechecks`` lists the later records, a recheck or the whole step measured again (date, boot,
    command)."""
    return merged_steps(records.read(Path(results_dir) / machine_name, "step"))


def merged_steps(step_records):
    """:func:`steps` of step records already read."""
    found = {}
    for record in step_records:
        found.setdefault((record["base"], record["head"], record["bindings"]), []).append(record)
    return [_merged(measured) for measured in found.values()]


def _merged(measured_records):
    first = measured_records[0]
    by_name = {}
    for record in measured_records:
        for case in record["cases"]:
            seen = {k: case[k] for k in ("ratio", "low", "high", "verdict")}
            by_name.setdefault(case["name"], []).append(
                (
                    case,
                    seen
                    | {
                        "start": record["host"]["start"],
                        "boot": record["host"]["boot"],
                        "date": record["date"],
                        "layouts": record["settings"]["layouts"],
                    },
                    record,
                )
            )
    cases, lost = [], {}
    for name, measured in by_name.items():
        triples = [(m["start"], m["verdict"], m["layouts"]) for _, m, _ in measured]
        verdict, confirmed = stats.repeated_verdict(triples)
        # the numbers shown: the newest measurement that says what the verdict says (a regression's,
        # its flag; a flag not reproduced, the flag, beside what cleared it)
        said = "regression" if verdict == "not reproduced" else verdict
        shown, _, record = next(
            (found for found in reversed(measured) if found[1]["verdict"] == said), measured[-1]
        )
        more = {}
        if verdict == "not reproduced":
            more["cleared_by"] = measured[stats.clearing(triples)[-1]][1]
        cases.append(
            shown
            | {
                "verdict": verdict,
                "confirmed": confirmed,
                "measurements": [m for _, m, _ in measured],
            }
            | more
        )
        if name in record["lost"]:  # of the measurement shown, not of another
            lost[name] = record["lost"][name]
    again = [
        {"date": r["date"], "boot": r["host"]["boot"], "command": r["command"]}
        for r in measured_records[1:]
    ]
    errors, only = {}, {}
    for record in measured_records:
        errors |= record["errors"]
        only |= record.get("only") or {}
    return first | {
        "environment_change": environment_change(first),
        "cases": cases,
        "rechecks": again,
        "lost": lost,
        "errors": {name: text for name, text in errors.items() if name not in by_name},
        "only": {name: said for name, said in only.items() if name not in by_name},
        "seconds": round(sum(r["seconds"] for r in measured_records), 1),
        "build_seconds": round(sum(r["build_seconds"] or 0 for r in measured_records), 1),
    }


def measured_in(results_dir, machine_name, conf):
    """The commits this machine measured in the environment ``conf`` (a derived asv.conf.json)
    builds: the same environment variables (cuda-bindings, system site)."""
    env = {key: values[0] for key, values in conf.get("matrix", {}).get("env", {}).items()}
    found = set()
    for path in result_files(Path(results_dir) / machine_name):
        data = asv_files.load(path)
        if data is not None and (data.get("env_vars") or {}) == env:
            found.add(data["commit_hash"])
    return found


def system_site(results_dir, machine_name):
    """The system site (``CUDA_BENCH_SYSTEM_SITE``) the machine's newest results file was measured
    with, or None: the environment its history is read in on a machine that lacks that folder."""
    runs = asv_files.load_machine(Path(results_dir) / machine_name)
    return (runs[-1].get("env_vars") or {}).get("CUDA_BENCH_SYSTEM_SITE") if runs else None


def newer_releases(commits, measured):
    """Of the release ladder's ``commits`` (``asvrun.release_ladder``'s, oldest first): the newest
    release whose commit is in ``measured`` as (tag, commit), or None; and the releases after it. A
    release of an older series tagged later (0.4.3 after 0.5.1) is not newer; the branch head is
    left to the nightly run of main."""
    releases = [(tag, sha) for tag, sha in commits if is_release_tag(tag)]
    newest = max((i for i, (_, sha) in enumerate(releases) if sha in measured), default=None)
    return (None, []) if newest is None else (releases[newest], releases[newest + 1 :])


def release_chain(newest, newer, measured):
    """The ladder's steps ``ladder --new`` makes: (release, next release) from ``newest`` through
    each of ``newer`` that asv measured (``measured``), skipping one it could not; not the steps by
    commit date that :func:`new_steps` finds, which would pair a new release with main's head where
    a full ladder measured it."""
    chain = [newest[1]] + [sha for _, sha in newer if sha in measured]
    return list(zip(chain, chain[1:]))


def snapshot(results_dir, machine_name):
    """{results file: modification time} of one machine: what a run changes, it measured."""
    return {p: p.stat().st_mtime_ns for p in result_files(Path(results_dir) / machine_name)}


def newly_measured(results_dir, machine_name, before):
    """The commits whose results files changed since ``before`` (a :func:`snapshot`)."""
    after = snapshot(results_dir, machine_name)
    found = [asv_files.load(p) for p, mtime in after.items() if before.get(p) != mtime]
    return list(dict.fromkeys(d["commit_hash"] for d in found if d is not None))


def newest_measured(results_dir, machine_name, before):
    """The newest commit (by commit date) among the results files that changed since ``before``, or
    None."""
    after = snapshot(results_dir, machine_name)
    found = [asv_files.load(p) for p, mtime in after.items() if before.get(p) != mtime]
    found = [d for d in found if d is not None]
    return max(found, key=lambda d: d.get("date") or 0)["commit_hash"] if found else None


def neighbours(results_dir, machine_name):
    """[(bindings, previous measured commit, next measured commit, previous's results file, next's)]
    in commit order and per environment; ``bindings``: the environment's ``CUDA_BENCH_BINDINGS``
    (the paired engine builds both sides of a step with one)."""
    found = []
    for path in result_files(Path(results_dir) / machine_name):
        data = asv_files.load(path)
        if data is not None:
            found.append((data, path))
    return neighbours_of(found)


def neighbours_of(measured):
    """:func:`neighbours` of ``measured``: [(asv results file as read, its path or None)]."""
    by_env = {}
    for data, path in measured:
        bindings = asv_files.bindings_of(data) or None
        by_env.setdefault((data.get("env_name"), bindings), []).append(
            (data.get("date") or 0, data["commit_hash"], path)
        )
    found = []
    for (_, bindings), runs in by_env.items():
        runs.sort(key=lambda run: run[:2])
        found += [
            (bindings, previous, commit, before_path, path)
            for (_, previous, before_path), (_, commit, path) in zip(runs, runs[1:])
            if previous != commit
        ]
    return found


def new_steps(results_dir, machine_name, before):
    """(previous measured commit, next measured commit) pairs, in commit order and per environment,
    for the results files that changed since ``before`` (a :func:`snapshot`): each newly measured
    commit is paired with the measured commit just before it, and with the one just after it when it
    was measured later (an older commit filled in), so the steps keep chaining."""
    after = snapshot(results_dir, machine_name)
    changed = {p for p, mtime in after.items() if before.get(p) != mtime}
    return list(
        dict.fromkeys(
            (previous, commit)
            for _, previous, commit, before_path, path in neighbours(results_dir, machine_name)
            if path in changed or before_path in changed
        )
    )  # once, however many envs


def missing_steps(results_dir, machine_name):
    """{bindings: [(previous, next)]}: the pairs of measured commits that have no paired step yet (a
    step that failed, a run with --no-steps), in commit order, by the cuda-bindings their
    environments were built with (``cuda-bench steps --bindings`` makes one list)."""
    return missing_of(steps(results_dir, machine_name), neighbours(results_dir, machine_name))


def missing_of(merged, pairs_of_neighbours):
    """:func:`missing_steps` from the machine's steps (:func:`merged_steps`) and its measured
    neighbours (:func:`neighbours_of`)."""
    done = {(step["bindings"], step["base"], step["head"]) for step in merged}
    missing = {}
    for bindings, previous, commit, _, _ in pairs_of_neighbours:
        pairs = missing.setdefault(bindings, [])
        # once, however many envs
        if (bindings, previous, commit) not in done and (previous, commit) not in pairs:
            pairs.append((previous, commit))
    return missing


def to_recheck(results_dir, machine_name, start):
    """The history's regressions not yet confirmed, which a measurement on this machine start
    (``start``, the ``start`` of ``machine.host()``) confirms or does not reproduce
    (``stats.repeated_verdict``):
    {(base, head, bindings): [case]}; and [(base, head, case)] for those flagged on this very start
    only, with a layout per process, which only another start can confirm. (The recheck has a layout
    per process:
    a flag made with one fixed layout per build is measured again on any start, its own included,
    where a flag clears it or not.)"""
    todo, here = {}, []
    for step in steps(results_dir, machine_name):
        for case in step["cases"]:
            if case["verdict"] != "regression" or case["confirmed"]:
                continue
            flags = [
                (m["start"], m["layouts"])
                for m in case["measurements"]
                if m["verdict"] == "regression"
            ]
            if {s for s, _ in flags} == {start} and (start, "random") in flags:
                here.append((step["base"], step["head"], case["name"]))
                continue
            todo.setdefault((step["base"], step["head"], step["bindings"]), []).append(case["name"])
    return todo, here


# --- chains of paired steps -----------------------------------------------------------------------
def chain_link(case):
    """The measurement of a step's case that a paired chain multiplies (its ``ratio``, ``low``,
    ``high``): the case's shown numbers, except for a flag not reproduced, whose measurement that
    cleared it (``cleared_by``) is the one its verdict rests on."""
    return case.get("cleared_by") or case


def chains(steps, commits):
    """Each case's paired chains along the history, one per build family (:func:`family`: the
    cuda-bindings both sides of a step ran): {case: {family: {commit: (value, low, high, root,
    steps)}}}. ``commits``: the commits in the history's order (``summary.order``). A chain
    multiplies only the steps of its family: a step across a change of build (a wheel's version,
    or a wheel to cuda_bindings built from the commit) is no link of any chain, so the chains
    restart there.
    Each run of commits that one family's steps link starts at ×1.000 at its first commit
    (``root``); a commit's value is the product of the ratios of the ``steps`` on the way from
    there (a step walked backwards divides), and its band the products of the steps' interval
    ends, at least as wide as a 95 % interval of the product. Where no paired step links two
    commits the chain starts again: an unpaired difference is never part of it."""
    at = {c: i for i, c in enumerate(commits)}
    names = {case["name"] for step in steps for case in step["cases"]}
    edges = {}  # (case, family) -> [(base, head, ratio, low, high)]
    for step in steps:
        build = family(step)
        if build is None or step["base"] not in at or step["head"] not in at:
            continue
        if identical(step):  # the same code on both sides: ×1 exactly for every case
            found = [(n, {"ratio": 1.0, "low": 1.0, "high": 1.0}) for n in names]
        else:
            found = [(case["name"], chain_link(case)) for case in step["cases"]]
        for case_name, link in found:
            edges.setdefault((case_name, build), []).append(
                (step["base"], step["head"], link["ratio"], link["low"], link["high"])
            )
    out = {}
    for (case_name, build), found in edges.items():
        out.setdefault(case_name, {})[build] = _walked(found, commits, at)
    return out


def _walked(found, commits, at):
    """{commit: (value, low, high, root, steps)} of one family's links of one case (``found``:
    [(base, head, ratio, low, high)]), each run of linked commits from its first commit."""
    links = {}  # commit -> [(place of the other commit, other, ratio, low, high)]
    for base, head, ratio, low, high in found:
        links.setdefault(base, []).append((at[head], head, ratio, low, high))
        links.setdefault(head, []).append((at[base], base, 1 / ratio, 1 / high, 1 / low))
    for linked in links.values():
        linked.sort(key=lambda link: link[0])  # the history's order, each commit's links once
    values = {}
    for root in commits:
        if root in values or root not in links:
            continue
        values[root] = (1.0, 1.0, 1.0, root, 0)
        todo = collections.deque([root])
        while todo:
            commit = todo.popleft()
            value, low, high, _, count = values[commit]
            for _, other, ratio, lo, hi in links[commit]:
                if other not in values:
                    values[other] = (value * ratio, low * lo, high * hi, root, count + 1)
                    todo.append(other)
    return values


def builds(runs_of, steps):
    """{commit: the build family the pages show of it} (``text.build_words`` of the cuda-bindings
    its shown build ran: ``runs_of``, one results file per commit, ``asv_files.one_per_commit``):
    the chain each commit's numbers stand on."""
    installed = installed_bindings(steps)
    return {
        d["commit_hash"]: build_words(
            asv_files.bindings_of(d),
            installed.get((d["commit_hash"], asv_files.bindings_of(d))),
        )
        for d in runs_of
    }


def flagged_steps(steps):
    """[(step, case)] for every case a step found to regress (controls never count, nor a case put
    down to a change of the environment, :func:`attributed`, nor a step that a :func:`twin` judges),
    newest step first."""
    found = [
        (step, case)
        for step in judged(steps)
        for case in step["cases"]
        if case["verdict"] == "regression"
        and not is_control(case["name"])
        and not attributed(step, case)
    ]
    return sorted(found, key=lambda sc: sc[0]["date"], reverse=True)
