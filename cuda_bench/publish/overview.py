"""Stage 5, publish: the overview's rows, one per (machine, operation, case) at each machine's
newest commit.

asv's medians for C++, cuda.bindings, cuda.core and CuPy, each Python number raw and net of the same
run's harness floor, the paired over-C++ measurement where there is one, and the history's paired
view of the same case: the newest step's verdict with its interval and the paired chain since the
first commit the steps reach (the product of the paired ratios along the way). The dashboard
(``cuda_bench.publish.dashboard``) and the Markdown reports (``cuda_bench.publish.report``) render
these rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuda_bench.foundations import calls
from cuda_bench.foundations.names import COLD_TWINS, CPP, HARNESS, case_name, cpp_id, is_cold_start
from cuda_bench.foundations.text import number, standing
from cuda_bench.publish import summary
from cuda_bench.results import asv_files, counts_read, history, overcpp_read

APIS = ("cpp", "bindings", "core", "cupy")

#: the library of operations that have none of the others' forms (no GPU, no C++ twin)
LOOKUPS = "pathfinder"
#: a cold start's columns: its C++ twin, then each library's fresh interpreter
COLD_APIS = ("cpp", "pathfinder", "bindings", "core", "cupy")

TITLES = {
    "cpp": "C++",
    "bindings": "cuda.bindings",
    "core": "cuda.core",
    "cupy": "CuPy",
    "pathfinder": "cuda.pathfinder",
}


# --- the overview ---------------------------------------------------------------------------------
def suite_differs(versions=None):
    """{benchmark: reason} for the suite's operations whose sides do different work
    (``Op.differs``); {} when the suite cannot be imported here. ``versions`` ({benchmark: version}
    of asv's benchmarks.json, the versions the history's numbers were measured with): where the
    suite has changed a benchmark since, its reason says that the numbers predate the change, since
    the suite's words are about the new work."""
    out = {}
    for name, said in calls.suite_said().items():
        reason, version = said["differs"], said["version"]
        measured = (versions or {}).get(name)
        if measured is not None and version is not None and measured != version:
            out[name] = (
                "these numbers are of an earlier version of this benchmark, which the "
                "suite has changed since (the next asv run measures it again)"
                + (f"; the new version: {reason}" if reason else "")
            )
        elif reason:
            out[name] = reason
    return out


def machine_order(by_machine):
    """The machines of ``by_machine`` ({machine: its results, newest last}) as every page lists
    them: those with a GPU first, then by name."""
    return sorted(by_machine, key=lambda m: (not by_machine[m][-1]["params"].get("gpu"), m))


def rows_of(described, runs, steps_by_machine, known, work, over_cpp):
    """:func:`overview_rows` of ``runs`` with what the history holds beside them: asv's description
    of the suite (``described``, benchmarks.json: parameter names, benchmark versions) and each
    machine's over-C++ records (``over_cpp``: {machine: records}); with ``work`` ({machine: {commit:
    counts record}}, ``history.work``), each Python cell's work per call (:func:`add_work`)."""
    versions = {name: b.get("version") for name, b in described.items()}
    rows = overview_rows(
        runs,
        steps_by_machine,
        known,
        {name: b.get("param_names", []) for name, b in described.items()},
        over_cpp,
        suite_differs(versions),
        versions,
    )
    add_work(rows, work or {})
    return rows


def add_work(rows, work):
    """Each Python cell of ``rows`` gets ``work``: its case's work per call at the row's commit, in
    a line, where that commit was counted (``work``: {machine: {commit: counts record}},
    ``history.work``)."""
    for row in rows:
        counted = summary.counted_at(work.get(row["machine"], {}).get(row["commit"]))
        if counted is None:
            continue
        cases = {c["name"]: c for c in counted["cases"]}
        for cell in row["cells"].values():
            # Python cells only: the C++ twin's cell names no case
            found = cases.get(cell.get("case"))
            if found:
                cell["work"] = counts_read.work_line(found)


def overview_rows(
    runs,
    steps_by_machine,
    known,
    param_names,
    overhead_by_machine=None,
    differs=None,
    versions=None,
):
    """One row per (machine, operation, case) at each machine's newest commit
    (``html/overview.json``).

    A row: ``machine``, ``benchmark``, ``case`` (the non-api parameters), ``commit``, ``release``
    (the tag of the newest release measured on the machine, from ``known``: ``asv_files.commits``;
    or None), ``params`` (the machine's), ``floor`` (this run's
    ``bench_harness.Floor.time_noop('noop')`` median in seconds, or None), ``gpu`` (the machine has
    one) and ``cells``, one per api present: ``cpp``, ``bindings``, ``core``, ``cupy``. A cell:

    - ``value``: asv's median in seconds (None: failed; NaN: skipped; None and ``unreadable``: a
      median no measurement can be, ``asv_files.impossible``), ``benchmark``, ``params``
      (for asv's graph link), ``case`` (Python cells: the case's full name, as the paired steps and
      the counts name it);
    - Python cells only: ``net`` (``value - floor``), ``over_cpp_ns``/``over_cpp_x``/``over_cpp_of``
      (with a C++ twin: net Python over C++), ``step`` (the paired step of main that ends at this
      commit, for this case: ``ratio``, ``low``, ``high``, ``verdict``, ``base``) and ``index``
      (``[product of paired ratios, from commit, steps]`` along main's steps since the first commit
      they reach), each None where there is none; ``regression``: the step's verdict is
      "regression". No cell holds a difference of asv's medians between commits: what changed is the
      paired steps' to say;
    - ``over_cpp``: where ``overhead_by_machine`` ({machine: its over-C++ records, oldest first, as
      ``results.overhead_runs`` reads them}) has one of this commit, the case's paired over-C++
      measurement (of the commit's runs, the one nearest the fast state: :func:`over_cpp_cases`;
      ``ratio``, ``low``, ``high``, ``coverage``, ``over_ns``, ``over_low``, ``over_high``, and the
      times per call it compares, ``py_ns`` and ``cpp_ns``: Python and its twin timed in turn in one
      process), and
      ``over_cpp_ns``/``over_cpp_x`` are taken from it (``over_cpp_of``: "paired");
      ``over_cpp["runs"]`` says how far its ratio moved over the commit's recorded runs that timed
      the same twins the same way (:func:`over_cpp_cases`: ``low``, ``high``, ``runs``, ``starts``;
      a run in the slow state is left out where another measured the case, ``left_out``, else
      marked, ``slower``).

    ``differs`` ({benchmark: reason}, from the suite's ``Op.differs``) marks rows whose sides do
    different work: ``row["differs"]``.

    ``versions`` ({benchmark: version}, the suite's, from asv's benchmarks.json): the newest
    commit's numbers of a benchmark measured under another version (the benchmark has changed since)
    are left out, and every row of that machine names them in ``row["older"]``.
    """
    overhead_by_machine = overhead_by_machine or {}
    by_machine = {}
    for machine_name, data in runs:
        by_machine.setdefault(machine_name, []).append(data)
    rows = []
    for machine_name in machine_order(by_machine):
        at = newest_of(
            machine_name,
            by_machine[machine_name],
            steps_by_machine.get(machine_name, []),
            known or {},
            overhead_by_machine.get(machine_name, []),
            versions,
        )
        params_of = {}
        for name, combo in at.current:
            params_of.setdefault(name, []).append(combo)
        for name in sorted(params_of):
            if name in (CPP, HARNESS, *COLD_TWINS.values()) or not name.split(".")[-1].startswith(
                "time_"
            ):
                continue
            combos = params_of[name]
            for case in dict.fromkeys(c[1:] for c in combos):  # asv's parameter order
                rows.append(
                    row_of(at, name, case, combos, param_names, (differs or {}).get(name, ""))
                )
    return rows


@dataclass
class Newest:
    """What a machine's rows are read against: its newest results file's values (``current``, the
    benchmarks measured under another version left out: ``older``), the harness floor there, the
    newest release measured before it, the paired step of main into it (``into``, its cases by name
    in ``into_cases``), each case's paired chains (``chains``, ``history.chains``) and the build
    each measured commit is shown in (``builds``), its C++ twins' values and its paired over-C++
    cases."""

    machine: str
    newest: dict
    current: dict
    older: list
    floor: float | None
    release: str | None
    into: dict | None
    into_cases: dict
    chains: dict
    #: the measured commits in the history's order, and {commit: its shown build, in words}
    commits: list
    builds: dict
    cpp: dict
    paired: dict
    #: {case: each form against cuda.bindings in one process, in the run ``paired`` took it from}
    #: (``overcpp_read.forms_in_runs``)
    forms: dict
    #: the cuda-bindings asv's medians ran with, in words (``text.build_words``)
    build: str


def newest_of(machine_name, runs_of, steps, known, recorded, versions):
    """:class:`Newest` of one machine: ``runs_of`` its results files, newest last; ``steps`` its
    steps; ``recorded`` its over-C++ records."""
    newest = runs_of[-1]
    current = asv_files.values(newest)
    measured_as = asv_files.versions(newest)
    older = sorted(
        {
            name
            for name, _ in current
            if versions and name in versions and measured_as.get(name) != versions[name]
        }
    )
    current = {key: value for key, value in current.items() if key[0] not in older}
    released = [
        d["commit_hash"]
        for d in runs_of
        if summary.tag(d["commit_hash"], known) and d["commit_hash"] != newest["commit_hash"]
    ]
    main_steps = [s for s in steps if summary.step_kind(s, known) == "main"]
    shown = history.builds(runs_of, steps)
    into = summary.step_into(newest["commit_hash"], main_steps, known, shown[newest["commit_hash"]])
    commits = summary.order(shown, known)
    of_commit = [r for r in recorded if r["commit"] == newest["commit_hash"]]
    paired = overcpp_read.over_cpp_cases(of_commit, recorded, versions)
    return Newest(
        machine=machine_name,
        newest=newest,
        current=current,
        older=older,
        floor=current.get((HARNESS, ("'noop'",))),
        release=summary.tag(summary.order(released, known)[-1], known) if released else None,
        into=into,
        into_cases={c["name"]: c for c in into["cases"]} if into else {},
        chains=history.chains(steps, commits),
        commits=commits,
        builds=shown,
        cpp={combo[0].strip("'"): v for (name, combo), v in current.items() if name == CPP},
        paired=paired,
        forms=overcpp_read.forms_in_runs(of_commit, paired),
        build=shown[newest["commit_hash"]],
    )


def row_of(at, name, case, combos, param_names, differs):
    """The row of one case (its non-api parameters ``case``) of benchmark ``name`` at ``at``
    (:class:`Newest`): a cell per library that measured it, and the C++ twin's."""
    row = {
        "machine": at.machine,
        "benchmark": name,
        "case": [c.strip("'") for c in case],
        "commit": at.newest["commit_hash"],
        "measured": asv_files.measured_at(at.newest),
        "release": at.release,
        "floor": at.floor,
        "params": at.newest["params"],
        "gpu": bool(at.newest["params"].get("gpu")),
        "cells": {},
        "differs": differs,
        "older": at.older,
        "build": at.build,
    }
    twin = cpp_id(name, ("'x'", *case))
    cpp_value = at.cpp.get(twin)
    unreadable = at.newest.get("unreadable", {})  # medians no measurement can be
    if number(cpp_value) or any(n == CPP and c[0] == f"'{twin}'" for n, c in unreadable):
        row["cells"]["cpp"] = {"value": cpp_value, "benchmark": CPP, "params": {"op": f"'{twin}'"}}
        if cpp_value is None:
            row["cells"]["cpp"]["unreadable"] = True
    cold = (COLD_TWINS.get(name), ("'cpp'",))
    cold_twin = at.current.get(cold)
    if number(cold_twin) or cold in unreadable:  # a cold start's twin: a program started fresh
        row["cells"]["cpp"] = {
            "value": cold_twin,
            "benchmark": COLD_TWINS[name],
            "params": {"api": "'cpp'"},
            "case": case_name(*cold),
        }
        if cold_twin is None:
            row["cells"]["cpp"]["unreadable"] = True
    for combo in combos:
        if combo[1:] == case:
            row["cells"][combo[0].strip("'")] = python_cell(at, name, combo, param_names, cpp_value)
    reference = row["cells"].get(overcpp_read.REFERENCE, {}).get("one_process")
    if reference:  # the twin timed beside cuda.bindings' form, in the same run
        row["cells"].setdefault("cpp", {"value": float("nan"), "benchmark": CPP, "params": {}})
        row["cells"]["cpp"]["one_process"] = {
            "py_ns": reference["cpp_ns"],
            "record": reference["record"],
        }
    return row


def chain_at(at, name):
    """Where the newest commit stands on case ``name``'s paired chain of the build it is shown in
    (``history.chains``): ``ratio``, ``low``, ``high``, ``since`` (the commit the chain starts at),
    ``steps``, ``build``, and ``before``, the build the commit before ``since`` is shown in where
    it is another (the chain restarts there: it never crosses builds); None where no chain of that
    build reaches it."""
    head = at.newest["commit_hash"]
    build = at.builds[head]
    found = at.chains.get(name, {}).get(build, {}).get(head)
    if found is None or found[4] == 0:
        return None
    ratio, low, high, since, steps = found
    place = at.commits.index(since)
    before = at.builds[at.commits[place - 1]] if place else None
    return {
        "ratio": ratio,
        "low": low,
        "high": high,
        "since": since,
        "steps": steps,
        "build": build,
        "before": before if before != build else None,
    }


#: what a cell keeps of a paired over-C++ measurement
OVER_CPP_KEPT = (
    "ratio",
    "low",
    "high",
    "coverage",
    "over_ns",
    "over_low",
    "over_high",
    "py_ns",
    "cpp_ns",
    "fast",
    "processes",
)


def python_cell(at, name, combo, param_names, cpp_value):
    """The cell of one Python form (``combo``, its api first) of benchmark ``name`` at ``at``
    (:class:`Newest`), against its C++ twin's value ``cpp_value``."""
    value = at.current[(name, combo)]
    # a cold start is net of `python -c pass` already, not of the harness's loop
    timed = number(value) and number(at.floor) and not is_cold_start(name)
    net = value - at.floor if timed else None
    full = case_name(name, combo)
    step = at.into_cases.get(full)
    cell = {
        "value": value,
        "net": net,
        "benchmark": name,
        "case": full,
        "params": dict(zip(param_names.get(name, []), combo)),
        "step": {k: step[k] for k in ("ratio", "low", "high", "verdict")}
        | {
            "base": at.into["base"],
            "standing": standing(step, at.into.get("versions")),
            "build": history.family(at.into) or "",
        }
        if step
        else None,
        "index": chain_at(at, full),
        "regression": bool(step and step["verdict"] == "regression"),
        "one_process": at.forms.get(full),
    }
    if (name, combo) in at.newest.get("unreadable", {}):
        cell["unreadable"] = True  # asv's median no measurement can be (asv_files.impossible)
    if number(cpp_value) and number(value):
        # the C++ twin has no harness around it: compare it with the net call
        python = value if net is None else net
        cell["over_cpp_of"] = "raw" if net is None else "net"
        cell["over_cpp_ns"] = (python - cpp_value) * 1e9
        cell["over_cpp_x"] = python / cpp_value if python > 0 else None
    over, spread = at.paired.get(full, (None, None))
    if over:
        cell["over_cpp"] = {k: over[k] for k in OVER_CPP_KEPT if k in over}
        if spread:
            cell["over_cpp"]["runs"] = spread
        cell["over_cpp_of"] = "paired"
        cell["over_cpp_ns"] = over["over_ns"]
        cell["over_cpp_x"] = over["ratio"]
    return cell
