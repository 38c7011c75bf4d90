"""Stage 5, report: the rows the dashboard and the Markdown reports show, and how numbers are written.

    python -m cuda_bench.report                 # each machine's newest commit in results/, as Markdown
    python -m cuda_bench.report --commit cb56ab9f
    python -m cuda_bench.report --across v0.1.0=72acaaf0 v0.5.1=73f808a6 main=cb56ab9f [--api core]
    python -m cuda_bench.report --steps         # the history's paired steps
    python -m cuda_bench.report --issue [--output FILE]   # the nightly issue: what the paired steps flagged

One row per (machine, operation, case) at each machine's newest commit: asv's medians for C++,
cuda.bindings, cuda.core and CuPy, each Python number raw and net of the same run's harness floor, the net
overhead over C++, and the history's paired view of the same case: the verdict of the newest step (the newest
commit paired with the previous measured one) and the chained index since the first commit the steps reach
(the product of the paired ratios along the way).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import re
import statistics
import sys
from pathlib import Path

from cuda_bench import results, stats, suite
from cuda_bench.layout import CPP, FLOOR, RESULTS, case_name, cpp_id, is_control, machine_dirs, short_name, split_case
from cuda_bench.results import machine_start
from cuda_bench.text import TARGET_NS, fmt, fmt_net, fmt_ns, last_line, measurements, number, signed, standing

APIS = ("cpp", "bindings", "core", "cupy")
TITLES = {"cpp": "C++", "bindings": "cuda.bindings", "core": "cuda.core", "cupy": "CuPy"}


def change(new, old):
    if not (number(new) and number(old)) or old == 0:
        return None
    return (new - old) / old


# --- the history's paired steps ------------------------------------------------------------------------
def chains(steps):
    """{commit: [steps from the chain's first commit to it]} for the commits the steps reach: each step
    pairs a commit with the previous measured one, so they chain."""
    by_head = {step["head"]: step for step in steps}
    out = {}
    for head in by_head:
        path, seen, commit = [], set(), head
        while commit in by_head and commit not in seen:
            seen.add(commit)
            path.append(by_head[commit])
            commit = by_head[commit]["base"]
        out[head] = path[::-1]
    return out


def chained_index(path, name):
    """(product of the case's paired ratios along ``path``, the commit it starts from, steps used), or None
    when a step of the path did not measure the case."""
    product = 1.0
    for step in path:
        case = next((c for c in step["cases"] if c["name"] == name), None)
        if case is None:
            return None
        product *= case["ratio"]
    return (product, path[0]["base"], len(path)) if path else None


def flagged_steps(steps):
    """[(step, case)] for every case a step found to regress (controls never count), newest step first."""
    found = [(step, case) for step in steps for case in step["cases"]
             if case["verdict"] == "regression" and not is_control(case["name"])]
    return sorted(found, key=lambda sc: sc[0].get("date", ""), reverse=True)


# --- the overview ---------------------------------------------------------------------------------------
def suite_differs():
    """{benchmark: reason} for the suite's operations whose sides do different work (``Op.differs``);
    {} when the suite cannot be imported here."""
    try:
        return {f"{module}.{cls.__name__}.{method}": cls.differs
                for module, cls in suite.benchmark_classes() if getattr(cls, "differs", "")
                for method in suite.timed_methods(cls)}
    except Exception as exc:  # the report still stands without the marks
        print(f"report: no marks from the suite ({type(exc).__name__}: {exc})", file=sys.stderr)
        return {}


def overview_rows(runs, steps_by_machine, releases, param_names, overhead_by_machine=None, differs=None,
                  versions=None):
    """One row per (machine, operation, case) at each machine's newest commit (``html/overview.json``).

    A row: ``machine``, ``benchmark``, ``case`` (the non-api parameters), ``commit``, ``release`` (the newest
    earlier commit with a cuda-core release tag, or None), ``params`` (the machine's), ``floor`` (this run's
    ``bench_harness.Floor.time_noop('noop')`` median in seconds, or None), ``gpu`` (the machine has one) and
    ``cells``, one per api present: ``cpp``, ``bindings``, ``core``, ``cupy``. A cell:

    - ``value``: asv's median in seconds (None: failed; NaN: skipped), ``benchmark``, ``params`` (for asv's
      graph link);
    - Python cells only: ``net`` (``value - floor``), ``vs_commit`` and ``vs_release`` (relative change, same benchmark version only, of
      ``value`` since the previous commit / release), ``over_cpp_ns``/``over_cpp_x``/``over_cpp_of`` (with a
      C++ twin: net Python over C++), ``step`` (the paired step that ends at this commit, for this case:
      ``ratio``, ``low``, ``high``, ``verdict``, ``base``) and ``index`` (``[product of paired ratios, from
      commit, steps]`` since the first commit the steps reach), each None where there is none;
      ``regression``: the step's verdict is "regression";
    - ``over_cpp``: where ``overhead_by_machine`` ({machine: its over-C++ records, oldest first, as
      ``results.overhead_runs`` reads them}) has one of this commit, the case's paired over-C++ measurement
      (of the commit's runs, the one nearest the fast state: :func:`over_cpp_cases`; ``ratio``, ``low``,
      ``high``, ``over_ns``, ``over_low``, ``over_high``: Python and its twin timed in turn in one process),
      and ``over_cpp_ns``/``over_cpp_x`` are taken from it (``over_cpp_of``: "paired"); ``over_cpp["runs"]``
      says how far its ratio moved over the commit's recorded runs that timed the same twins the same way
      (:func:`over_cpp_cases`: ``low``, ``high``, ``runs``, ``starts``; a run in the slow state is left out
      where another measured the case, ``left_out``, else marked, ``slower``).

    ``differs`` ({benchmark: reason}, from the suite's ``Op.differs``) marks rows whose sides do different
    work: ``row["differs"]``.

    ``versions`` ({benchmark: version}, the suite's, from asv's benchmarks.json): the newest commit's numbers
    of a benchmark measured under another version (the benchmark has changed since) are left out, and every
    row of that machine names them in ``row["older"]``.
    """
    overhead_by_machine = overhead_by_machine or {}
    differs = differs or {}
    rows = []
    by_machine = {}
    for machine_name, data in runs:
        by_machine.setdefault(machine_name, []).append(data)
    order = sorted(by_machine, key=lambda m: (not by_machine[m][-1]["params"].get("gpu"), m))  # GPUs first
    for machine_name in order:
        history = by_machine[machine_name]
        newest = history[-1]
        current = results.values(newest)
        measured_as = results.versions(newest)
        older = sorted({name for name, _ in current if versions and name in versions
                        and measured_as.get(name) != versions[name]})
        current = {key: value for key, value in current.items() if key[0] not in older}
        floor = current.get((FLOOR, ("'noop'",)))
        # the commits before the newest (the same commit in another environment is no earlier commit)
        earlier = [d for d in history if d["commit_hash"] != newest["commit_hash"]]
        previous = results.comparable(previous_run(earlier, newest), newest) if earlier else {}
        release_runs = [d for d in earlier if d["commit_hash"] in releases]
        release = results.comparable(previous_run(release_runs, newest), newest) if release_runs else {}
        release_name = releases[release_runs[-1]["commit_hash"]] if release_runs else None
        path = chains(steps_by_machine.get(machine_name, [])).get(newest["commit_hash"], [])
        last_step = {c["name"]: c for c in path[-1]["cases"]} if path else {}
        cpp = {combo[0].strip("'"): v for (name, combo), v in current.items() if name == CPP}
        recorded = overhead_by_machine.get(machine_name, [])
        paired = over_cpp_cases([r for r in recorded if r["commit"] == newest["commit_hash"]], recorded, versions)
        params_of = {}
        for name, combo in current:
            params_of.setdefault(name, []).append(combo)
        for name in sorted(params_of):
            if name in (CPP, FLOOR) or not name.split(".")[-1].startswith("time_"):
                continue
            combos = params_of[name]
            for case in dict.fromkeys(c[1:] for c in combos):  # asv's parameter order
                row = {"machine": machine_name, "benchmark": name, "case": [c.strip("'") for c in case],
                       "commit": newest["commit_hash"], "release": release_name, "floor": floor,
                       "params": newest["params"], "gpu": bool(newest["params"].get("gpu")), "cells": {},
                       "differs": differs.get(name, ""), "older": older}
                twin = cpp_id(name, ("'x'", *case))
                cpp_value = cpp.get(twin)
                if number(cpp_value):
                    row["cells"]["cpp"] = {"value": cpp_value, "benchmark": CPP, "params": {"op": f"'{twin}'"}}
                for combo in combos:
                    if combo[1:] != case:
                        continue
                    api = combo[0].strip("'")
                    value = current[(name, combo)]
                    net = value - floor if number(value) and number(floor) else None
                    full = case_name(name, combo)
                    step = last_step.get(full)
                    cell = {"value": value, "net": net, "benchmark": name,
                            "params": dict(zip(param_names.get(name, []), combo)),
                            "vs_commit": change(value, previous.get((name, combo))),
                            "vs_release": change(value, release.get((name, combo))),
                            "step": {k: step[k] for k in ("ratio", "low", "high", "verdict")} | {
                                "base": path[-1]["base"], "standing": standing(step, path[-1].get("versions"))} if step else None,
                            "index": list(chained_index(path, full) or []) or None,
                            "regression": bool(step and step["verdict"] == "regression")}
                    if number(cpp_value) and number(value):
                        # the C++ twin has no harness around it: compare it with the net call
                        python = value if net is None else net
                        cell["over_cpp_of"] = "raw" if net is None else "net"
                        cell["over_cpp_ns"] = (python - cpp_value) * 1e9
                        cell["over_cpp_x"] = python / cpp_value if python > 0 else None
                    over, spread = paired.get(full, (None, None))
                    if over:
                        cell["over_cpp"] = {k: over[k] for k in ("ratio", "low", "high", "over_ns", "over_low",
                                                                 "over_high", "fast", "processes") if k in over}
                        if spread:
                            cell["over_cpp"]["runs"] = spread
                        cell["over_cpp_of"] = "paired"
                        cell["over_cpp_ns"] = over["over_ns"]
                        cell["over_cpp_x"] = over["ratio"]
                    row["cells"][api] = cell
                rows.append(row)
    return rows


def previous_run(earlier, newest):
    """Of ``earlier`` (results dicts, oldest first), the newest commit's run, in ``newest``'s environment where
    that commit was measured in it."""
    last = [d for d in earlier if d["commit_hash"] == earlier[-1]["commit_hash"]]
    return next((d for d in reversed(last) if d.get("env_name") == newest.get("env_name")), last[-1])


def run_kind(record):
    """What makes two over-C++ records of one commit comparable: the same twins (``twins``, their version)
    timed the same way (``layouts``) and read the same way (``state``: "fast", the medians over the processes
    in the fast state, ``stats.fast_state``; "all" for records from before that): ``(twins, layouts, state)``,
    or None for a record older than the twins field."""
    settings = record.get("settings", {})
    return (record.get("twins"), results.layouts(record), settings.get("state") or "all") \
        if record.get("twins") else None


def fast_kind(kind):
    """Whether records of this :func:`run_kind` read each ratio over the processes in the fast state."""
    return kind is not None and kind[2] == "fast"


# A run is in the fast state by the rule a process is (stats.FAST_WINDOW): its fast-state processes within that
# window of the fastest run's (read on the C++ twins: slow_factors); a run further off had no fast process.
SLOW_STATE = stats.FAST_WINDOW


def in_slow_state(factor):
    """Whether a run's :func:`slow_factors` (None: not read in the fast state) is above :data:`SLOW_STATE`."""
    return factor is not None and factor > SLOW_STATE


def slow_state(spread):
    """A case's ``slower`` factor (:func:`over_cpp_cases`) when it is above :data:`SLOW_STATE`, else None."""
    slower = (spread or {}).get("slower")
    return slower if in_slow_state(slower) else None


def slow_factors(records, reference=()):
    """Per over-C++ record (oldest first), for those read in the fast state: how much slower the state its
    processes ran in was than the fastest recorded, read on the C++ twins: the median over its cases of the
    twin's time (``cpp_ns``) over the lowest ``cpp_ns`` of that case in ``records`` and ``reference`` (the
    machine's other over-C++ records, of any commit: the twins do not depend on cuda-python, so a commit
    measured once is judged too) of the same kind (:func:`run_kind`); None for the others. The twins slow
    down with the state as Python does (on the sixteen H200 runs at cb56ab9f9 the same factor read on the
    Python side differs by at most 0.11). Above :data:`SLOW_STATE` the run probably had no process in the
    fast state, so its fast-state ratios are the fastest of the slow processes and read high."""
    fastest = {}  # (kind, case): the lowest C++ time of the case over the records of that kind
    for r in [*reference, *records]:
        kind = run_kind(r)
        for c in r["cases"] if fast_kind(kind) else ():
            if c["cpp_ns"] > 0:
                key = (kind, c["name"])
                fastest[key] = min(fastest.get(key, c["cpp_ns"]), c["cpp_ns"])
    out = []
    for r in records:
        kind = run_kind(r)
        ratios = [c["cpp_ns"] / fastest[(kind, c["name"])] for c in r["cases"]
                  if fast_kind(kind) and c["cpp_ns"] > 0]
        out.append(statistics.median(ratios) if ratios else None)
    return out


def slow_run_note(records, reference=()):
    """For the newest of one commit's over-C++ records (oldest first; what ``scripts/bench overhead`` has just
    measured; ``reference``: the machine's other records, as for :func:`slow_factors`): a line saying that it
    ran in the slow state, or None."""
    factor = slow_factors(records, reference)[-1] if records else None
    if not in_slow_state(factor):
        return None
    return (f"this run's C++ twins ran ×{factor:.3f} slower than their fastest recorded run on this machine "
            f"(the slow state: above ×{SLOW_STATE}); probably no process was in the fast state, so its ratios "
            f"read high. The overview leaves it out where another run of {records[-1]['commit'][:9]} measured "
            f"the case, and marks it where none did; run it again later.")


def repeat_note(records, reference=()):
    """For the newest of one commit's over-C++ records (oldest first; what ``scripts/bench overhead`` has just
    measured; ``reference`` as for :func:`slow_factors`): how it agrees (:func:`agreement`) with the earlier
    run of the commit, of the same kind, nearest the fast state and not in the slow state: the issue's test,
    read as soon as a run ends, with the twins' control. None when there is no such run."""
    if len(records) < 2:
        return None
    newest, kind = records[-1], run_kind(records[-1])
    factors = slow_factors(records, reference)
    earlier = [(x, r) for r, x in zip(records[:-1], factors) if run_kind(r) == kind and fast_kind(kind)
               and x is not None and not in_slow_state(x)]
    if not earlier:
        return None
    factor, base = min(earlier, key=lambda e: e[0])
    (pair,) = agreement([base, newest])
    if not pair["cases"]:
        return None
    when = {True: "on the same machine start", False: "on another machine start", None: ""}[pair["same_start"]]
    if pair["same_day"] is False:
        when = f"{when}, another day" if when else "on another day"
    still = _still(pair)
    return (f"against {pair['a']} (the earlier run of {newest['commit'][:9]} nearest the fast state, ×{factor:.2f}"
            f"{', ' + when if when else ''}): {pair['agree']} of {pair['cases']} cases ({_share(pair)}) give the "
            f"same ratio within {AGREE:.0%}; {pair['twins_moved']} C++ twins moved more than {AGREE:.0%} beside the "
            f"others (the machine, not Python), and over the other {still['cases']} cases {still['agree']} "
            f"({_share(still)}) agree")


def same_work(a, b):
    """Whether two over-C++ measurements of a case (cases of records) timed the same Python work: the same asv
    version of its benchmark (``compare.stamp_versions``; records older than the twins' version field name
    none, and match only each other)."""
    return a.get("version") == b.get("version")


def over_cpp_cases(records, reference=(), versions=None):
    """Per case, from the over-C++ records of one commit (oldest first): one measurement of it and how far its
    ratio moved over the records of that one's kind (:func:`run_kind`) that measured it: {case: (case dict,
    {"low", "high", "runs", "starts"[, "slower"][, "left_out"]})}, the second None where the record does not
    say which twins it timed (``starts``: how many machine starts those records name; runs on different
    starts differ more than runs on one). The kind is the newest record's that measured the case (a run of a
    few cases, ``-b``, hides no other case's); the measurement, among that kind's records, the one nearest
    the fast state (the lowest :func:`slow_factors`, ``slower``, with ``reference`` the machine's other
    records; the newest where the records were not read in the fast state). A run in the slow state (above
    :data:`SLOW_STATE`) reads its ratios high, so it is neither the measurement nor in the range where a
    run of its kind that is not in that state measured the case (``left_out``: how many were left out);
    where none did, it is the measurement, and :func:`over_text` marks it. Only measurements of the same work
    (:func:`same_work`) make one range; with ``versions`` ({benchmark: its version now}), a case measured under
    another version of its benchmark is left out."""
    kinds = [run_kind(r) for r in records]
    slower = slow_factors(records, reference)  # read on every case's twin, whatever its Python version
    slow = [in_slow_state(x) for x in slower]
    if versions:
        def now(case):
            benchmark = split_case(case["name"])[0]
            return {"version": versions[benchmark]} if benchmark in versions else case

        records = [r | {"cases": [c for c in r["cases"] if same_work(c, now(c))]} for r in records]
    cases_of = [{c["name"]: c for c in r["cases"]} for r in records]
    newest_first = list(reversed(range(len(records))))
    out = {}
    for i in newest_first:
        for case in records[i]["cases"]:
            name = case["name"]
            if name in out:
                continue
            if kinds[i] is None:
                out[name] = (case, None)
                continue
            found = [j for j in newest_first if kinds[j] == kinds[i] and name in cases_of[j]
                     and same_work(case, cases_of[j][name])]
            kept = [j for j in found if not slow[j]] or found
            pick = min(kept, key=lambda j: slower[j] or 0)  # ties (records not read in the fast state): newest
            ratios = [cases_of[j][name]["ratio"] for j in kept]
            spread = {"low": min(ratios), "high": max(ratios), "runs": len(kept),
                      "starts": len({machine_start(records[j]) for j in kept} - {None})}
            if slower[pick] is not None:
                spread["slower"] = round(slower[pick], 3)
            if len(kept) < len(found):
                spread["left_out"] = len(found) - len(kept)
            out[name] = (cases_of[pick][name], spread)
    return out


# --- Markdown ----------------------------------------------------------------------------------------
def cell_text(row, api):
    c = row["cells"].get(api)
    if c is None:
        return ""
    if not number(c["value"]):
        return "failed" if c["value"] is None else "n/a"
    text = fmt(c["value"]) + (f" (net {fmt_net(c['net'])})" if number(c.get("net")) else "")
    if c.get("index"):
        text += f" ×{c['index'][0]:.3f}"
    return text


def markdown(rows):
    first = rows[0]
    params = first["params"]
    usual = usual_runs(rows)
    ranges = f"; here a range is over {usual_runs_text(usual)} unless its cell names a count" if usual else ""
    lines = [
        f"Machine `{first['machine']}`: {params.get('gpu', 'no GPU')}, driver {params.get('driver', '-')} "
        f"(CUDA {params.get('cuda_driver', '-')}), {params.get('cpu')}, {params.get('num_cpu')} CPUs; "
        f"cuda-python commit `{first['commit'][:9]}`.",
        "",
        f"Harness floor (`bench_harness.Floor.time_noop`: the same timed body, the call written out "
        f"many times per asv loop turn (`benchmarks/_op.py` `UNROLL`), around `gc.isenabled()`, a C function that does nothing, measured in the same run): "
        f"**{fmt(first['floor']) if number(first['floor']) else 'n/a'}**. Every Python number is raw (floor "
        f"included) and, in parentheses, net (raw − floor; `<0` is noise); where the history's paired steps "
        f"reach this commit, ×N is the chained index (product of the paired ratios since the first commit they "
        f"reach). C++ is timed in-process without the harness: already net. \"cuda.core over C++\" compares the "
        f"net number with C++{'' if number(first['floor']) else ' (no floor in this run: the raw number)'}.",
        "",
        f"\"Over C++\" is {'paired (Python and its C++ twin timed in turn in one process, `scripts/bench overhead`)' if any('over_cpp' in c for r in rows for c in r['cells'].values()) else 'unpaired'}: "
        f"the difference per call and the ratio, ✓ under cuda-python's target of {fmt(TARGET_NS * 1e-9)} over C++ "
        f"(#1580), ✗ above. Where this commit has more than one recorded run of the same twins timed and read "
        f"the same way, the number is the run nearest the fast state (whose C++ twins ran fastest) and, in "
        f"parentheses, the lowest and highest ratio over the runs (runs on other machine starts move a ratio "
        f"more than one run's interval says), less those in the slow state (C++ twins more than ×{SLOW_STATE} "
        f"slower than their fastest recorded run on the machine: their ratios read high; such a run is "
        f"marked ⚠ where no other measured the case){ranges}. ★: the sides do different work "
        f"(the reason under the table).",
        "",
        "| operation | case | " + " | ".join(TITLES[a] for a in APIS) + " | cuda.core over C++ | cuda.bindings over C++ |",
        "|---|---|" + "---:|" * (len(APIS) + 2),
    ]
    marked = {}
    for row in rows:
        short = short_name(row["benchmark"])
        star = " ★" if row.get("differs") else ""
        if star:
            marked[short] = row["differs"]
        lines.append(f"| `{short}`{star} | {' '.join(row['case'])} | "
                     + " | ".join(cell_text(row, a) for a in APIS)
                     + f" | {over_text(row['cells'].get('core', {}), usual)} | {over_text(row['cells'].get('bindings', {}), usual)} |")
    if marked:
        lines += ["", *(f"★ `{name}`: {reason}." for name, reason in marked.items())]
    if first.get("older"):
        lines += ["", OLDER.format(names=", ".join(f"`{n}`" for n in first["older"]))]
    return "\n".join(lines)


OLDER = ("Not in the table: {names}, measured at this commit by an earlier version of the benchmark (it has "
         "changed since; asv does not compare versions either).")


def _counts(runs):
    return runs["runs"], runs.get("left_out", 0)


def usual_runs(rows):
    """The (runs, left out in the slow state) that most over-C++ ranges of one machine's rows are over, or None:
    a table says it once (:func:`usual_runs_text`) and :func:`over_text` leaves it out of those cells."""
    counts = collections.Counter()
    for row in rows:
        for cell in row["cells"].values():
            runs = (cell.get("over_cpp") or {}).get("runs") or {}
            if runs.get("runs", 0) > 1:
                counts[_counts(runs)] += 1
    return counts.most_common(1)[0][0] if counts else None


def usual_runs_text(usual):
    """'22 runs (2 more, in the slow state, left out)' for a :func:`usual_runs`."""
    runs, left_out = usual
    return f"{runs} runs" + (f" ({left_out} more, in the slow state, left out)" if left_out else "")


def over_text(cell, usual=None):
    """'+120 ns ×1.52 ✓': Python over C++ per call, the ratio, and the 1 us target; with the range of the ratio
    over the commit's runs, and how many runs it is over unless that is ``usual`` (:func:`usual_runs`)."""
    if "over_cpp_ns" not in cell:
        return ""
    x = "" if cell["over_cpp_x"] is None else f" ×{cell['over_cpp_x']:.2f}"
    runs = (cell.get("over_cpp") or {}).get("runs") or {}
    several = runs.get("runs", 0) > 1
    said = several and _counts(runs) == usual  # the count is above the table
    spread = [f"×{runs['low']:.2f}–{runs['high']:.2f}" + ("" if said else f" in {runs['runs']} runs")] if several else []
    if runs.get("left_out") and not said:
        spread.append(f"{runs['left_out']} in the slow state left out")
    spread = f" ({', '.join(spread)})" if spread else ""
    slow = " ⚠ slow state" if slow_state(runs) else ""
    return signed(cell["over_cpp_ns"] * 1e-9) + x + spread + (" ✓" if cell["over_cpp_ns"] < TARGET_NS else " ✗") + slow


def across(runs, columns, api):
    """One row per operation and case, one column per ``LABEL=COMMIT`` (the release ladder): ``api``'s
    median per call, raw, and the harness floor of each run on top."""
    picked = []
    for column in columns:
        name, _, prefix = column.rpartition("=")
        found = [d for _, d in runs if d["commit_hash"].startswith(prefix)]
        if not found:
            raise SystemExit(f"report: no results for commit {prefix}")
        picked.append((name or prefix, results.values(found[-1])))
    keys = [k for k in picked[-1][1] if k[1][:1] == (f"'{api}'",)]
    for _, vals in picked[:-1]:
        keys += [k for k in vals if k[1][:1] == (f"'{api}'",) and k not in keys]
    floors = [v.get((FLOOR, ("'noop'",))) for _, v in picked]
    lines = ["| operation | case | " + " | ".join(name for name, _ in picked) + " |",
             "|---|---|" + "---:|" * len(picked),
             "| harness floor |  | " + " | ".join(fmt(f) if number(f) else "n/a" for f in floors) + " |"]
    for name, combo in sorted(keys):
        cells = []
        for _, vals in picked:
            value = vals.get((name, combo))
            if (name, combo) not in vals:
                cells.append("—")  # the suite had no such benchmark or case then
            else:
                cells.append(fmt(value) if number(value) else "failed" if value is None else "skipped")
        case = " ".join(c.strip("'") for c in combo[1:])
        lines.append(f"| `{short_name(name)}` | {case} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def steps_markdown(machine_name, steps):
    """The history's paired steps of one machine: each step's counts, then every case a step flagged."""
    lines = [f"Paired steps on `{machine_name}` (each newly measured commit against the previous one):", "",
             "| base → head | date | regressions | improvements | same | not reproduced | not measured | seconds |",
             "|---|---|--:|--:|--:|--:|--:|--:|"]  # VERDICTS, then the step's errors
    for step in steps:
        counted = [c for c in step["cases"] if not c.get("control")]
        count = {v: sum(c["verdict"] == v for c in counted) for v in stats.VERDICTS}
        lines.append(f"| `{step['base'][:9]}` → `{step['head'][:9]}` | {step.get('date', '')[:10]} | "
                     + " | ".join(str(count[v]) for v in stats.VERDICTS)
                     + f" | {len(step.get('errors') or {})} | {step.get('seconds', 0):.0f} |")
    for step in steps:
        where = f"`{step['base'][:9]}` → `{step['head'][:9]}`"
        for case in step["cases"]:
            if case["verdict"] in ("regression", "not reproduced") and not case.get("control"):
                said = standing(case, step.get("versions"))  # the versions only ever follow a regression's
                said = said if case["verdict"] == "not reproduced" else f"regression ({said})"
                lines.append(f"- {where} `{case['name']}`: {said}: {measurements(case)}")
        for name, text in sorted((step.get("errors") or {}).items()):
            lines.append(f"- {where} `{name}`: not measured: {last_line(text)}")
        for name, text in sorted((step.get("lost") or {}).items()):
            lines.append(f"- {where} `{name}`: measured from fewer process pairs: {text}")
    return "\n".join(lines)


MARKER = "<!-- cuda-python-bench:regressions -->"


def issue_body(steps_by_machine, commit_url="https://github.com/NVIDIA/cuda-python/commit/"):
    """The nightly issue: every case a paired step of main's history flagged, newest first (the release
    ladder's steps, ``results.release_step``, are history: counted in one line, listed on steps.html).
    (text, count)"""
    rows, releases = [], 0
    for machine_name, steps in sorted(steps_by_machine.items()):
        releases += len(flagged_steps([s for s in steps if results.release_step(s)]))
        for step, case in flagged_steps([s for s in steps if not results.release_step(s)]):
            base, head = step["base"], step["head"]
            rows.append(f"| {machine_name} | `{case['name']}` | [`{base[:9]}`]({commit_url}{base}) → "
                        f"[`{head[:9]}`]({commit_url}{head}) | {measurements(case)} | {case['threshold']:.1%} | "
                        f"{fmt_ns(case['base_ns'])} → {fmt_ns(case['head_ns'])} | {standing(case, step.get('versions'))} |")
    lines = [MARKER, f"The history's paired comparisons flag **{len(rows)} regression{'s' if len(rows) != 1 else ''}** "
             "on main: a newly measured commit against the previous one, interleaved on one core; a flag needs "
             f"the whole {stats.CONFIDENCE:.0%} interval beyond the case's threshold, and it is confirmed once a second "
             "machine start flags it too, one of the two with a layout per process (`scripts/bench steps --recheck`); one that another start measured without "
             "a flag is not listed. Updated by the nightly benchmark run.", ""]
    if releases:
        lines += [f"Not counted here: {releases} regression{'s' if releases != 1 else ''} between cuda-core releases "
                  "(the release ladder's paired steps), on the dashboard's steps page.", ""]
    if rows:
        lines += [f"| machine | case | commits | ratio [{stats.CONFIDENCE:.0%} interval], each measurement | threshold "
                  "| per call | standing |", "|---|---|---|--:|--:|--:|---|", *rows]
    return "\n".join(lines) + "\n", len(rows)


AGREE = 0.05  # cuda-python-bench issue 15: two over-C++ runs give the same ratio within 5% for >= 90% of rows


def run_label(record):
    """An over-C++ record's name: its ``--out`` folder where the command names one, else its date."""
    found = re.search(r"--out\s+\S*?([^/\s]+)/?(?:\s|$)", record.get("command") or "")
    return found.group(1) if found else record.get("date", "?")


def apart(a, b):
    """How far two ratios are apart, either way: max(a/b, b/a) - 1."""
    return max(a / b, b / a) - 1


SHARE = 0.9  # ... for at least this share of the cases


def agreement(records, leave_out=(), within=AGREE):
    """Every pair of over-C++ records (of one commit): the cases both measured with the same timed work
    (:func:`same_work`; less ``leave_out``), how many
    give the same ratio within ``within`` either way, the cases furthest apart, whether the two ran on one
    machine start (``same_start``: True, False, or None where a record does not say) and on one day (UTC).

    The control (the twins' own A/A): the C++ twins do not depend on cuda-python, so between two runs each
    twin should move as the run's others do (the state). ``twins_moved`` counts the cases whose twin moved by
    more than ``within`` beside the median of all twins' moves; their ratios move with it whatever Python
    does (the launch twins, with the driver's launch path: docs/measurement.md, session 15).
    ``still_agree`` is how many of the other ``cases - twins_moved`` give the same ratio.
    [{"a", "b", "cases", "agree", "furthest": [(name, b/a - 1)], "same_start", "same_day", "twins_moved",
    "still_agree"}]"""
    out = []
    for first, second in itertools.combinations(records, 2):
        a = {c["name"]: c for c in first["cases"]}
        b = {c["name"]: c for c in second["cases"]}
        names = [n for n in a if n in b and n not in leave_out and same_work(a[n], b[n])]
        same = {n: apart(a[n]["ratio"], b[n]["ratio"]) <= within for n in names}
        furthest = sorted(((n, b[n]["ratio"] / a[n]["ratio"] - 1) for n in names),
                          key=lambda x: -apart(a[x[0]]["ratio"], b[x[0]]["ratio"]))
        moves = {n: b[n]["cpp_ns"] / a[n]["cpp_ns"] for n in names
                 if a[n].get("cpp_ns", 0) > 0 and b[n].get("cpp_ns", 0) > 0}
        usual = statistics.median(moves.values()) if moves else 1.0
        moved = {n for n, x in moves.items() if apart(x, usual) > within}
        starts = machine_start(first), machine_start(second)
        out.append({"a": run_label(first), "b": run_label(second), "cases": len(names),
                    "agree": sum(same.values()), "furthest": furthest[:3],
                    "same_start": None if None in starts else starts[0] == starts[1],
                    "same_day": None if not (first.get("date") and second.get("date"))
                    else first["date"][:10] == second["date"][:10],
                    "twins_moved": len(moved), "still_agree": sum(same[n] for n in names if n not in moved)})
    return out


def agreement_markdown(pairs, within=AGREE, share=SHARE, slow=None):
    """The pairs as a table, then per kind of pair (one machine start, two, unknown; two days) how many reach
    ``share``; ``slow`` ({run label: :func:`slow_factors`} of the runs in the slow state): named, and the
    counts again without them (the overview leaves them out where another run measured the case)."""
    start = {True: "same", False: "different", None: "?"}
    lines = [f"| run A | run B | machine start | day | cases | same ratio within {within:.0%} | "
             f"C++ twin moved beside the others (> {within:.0%}) | same ratio where it did not | "
             f"furthest apart (B/A − 1) |", "|---|---|---|---|--:|--:|--:|--:|---|"]
    for p in pairs:
        furthest = ", ".join(f"`{re.sub(r'[.]time_[a-z_]+', '', n.split('.', 1)[-1])}` {d:+.1%}"
                             for n, d in p["furthest"])
        lines.append(f"| {p['a']} | {p['b']} | {start[p['same_start']]} | {start[p['same_day']]} | {p['cases']} | "
                     f"**{p['agree']} ({_share(p)})** | {p['twins_moved']} | "
                     f"{p['still_agree']} ({_share(_still(p))}) | {furthest} |")
    lines += ["", *_reaching(pairs, share)]
    if slow:
        named = ", ".join(f"{label} ×{factor:.3f}" for label, factor in slow.items())
        lines += ["", f"Runs in the slow state (C++ twins more than ×{SLOW_STATE} slower than their fastest recorded "
                  f"run on the machine; the overview leaves them out): {named}. Without them:", ""]
        lines += _reaching([p for p in pairs if p["a"] not in slow and p["b"] not in slow], share)
    return "\n".join(lines)


def _reaching(pairs, share):
    lines = []
    for key, kind, words in (("same_start", True, "on one machine start"),
                             ("same_start", False, "across machine starts"),
                             ("same_start", None, "where a record does not say its machine start"),
                             ("same_day", False, "on different days")):
        mine = [p for p in pairs if p[key] is kind and p["cases"]]
        if mine:
            shares = sorted(p["agree"] / p["cases"] for p in mine)
            still = sorted(s["agree"] / s["cases"] for s in map(_still, mine) if s["cases"])
            line = (f"- {words}: {sum(x >= share for x in shares)} of {len(mine)} pairs agree on at least "
                    f"{share:.0%} of the cases (from {shares[0]:.0%} to {shares[-1]:.0%})")
            if still:
                line += (f"; on the cases whose C++ twin did not move beside the others, {sum(x >= share for x in still)}"
                         f" of {len(still)} (from {still[0]:.0%} to {still[-1]:.0%})")
            lines.append(line)
    return lines


def _share(pair):
    return f"{pair['agree'] / pair['cases']:.0%}" if pair["cases"] else "-"


def _still(pair):
    """A pair counted over the cases whose C++ twin did not move beside the others."""
    return {"agree": pair["still_agree"], "cases": pair["cases"] - pair["twins_moved"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--commit", help="report this commit (a prefix) instead of the newest")
    parser.add_argument("--across", nargs="+", metavar="[LABEL=]COMMIT",
                        help="one column per commit (a release ladder) for one api")
    parser.add_argument("--api", default="core", choices=APIS)
    parser.add_argument("--steps", action="store_true", help="the history's paired steps")
    parser.add_argument("--issue", action="store_true", help="the nightly issue's body; exit 1 when a paired "
                        "step flagged something")
    parser.add_argument("--output", type=Path, help="with --issue: also write the body here")
    parser.add_argument("--agreement", action="store_true", help="how far the recorded over-C++ runs of a "
                        "commit (--commit, else the newest measured) agree, every pair")
    args = parser.parse_args(argv)
    runs = results.load_all(args.results)
    machines = sorted({m for m, _ in runs})
    steps = {m: results.steps(args.results, m) for m in machines}
    if args.issue:
        text, count = issue_body(steps)
        print(text)
        if args.output:
            args.output.write_text(text)
        return 1 if count else 0
    if args.steps:
        print("\n\n".join(steps_markdown(m, s) for m, s in steps.items() if s) or "report: no paired steps yet")
        return 0
    if args.across:
        print(across(runs, args.across, args.api))
        return 0
    if args.agreement:
        found = False
        for m in (d.name for d in machine_dirs(args.results)):
            records = results.overhead_runs(args.results, m)
            commit = next((r["commit"] for r in reversed(records)
                           if r["commit"].startswith(args.commit or "")), None)
            kinds = {}  # runs of the same twins timed the same way, compared among themselves
            for r in records:
                if r["commit"] == commit:
                    kinds.setdefault(run_kind(r), []).append(r)
            for kind, mine in kinds.items():
                if len(mine) > 1:
                    found = True
                    what = (f"twins {kind[0]}, {kind[1]} layouts, ratios over {kind[2]} processes" if kind else
                            "records that do not say which twins they timed")
                    print(f"Over C++ at `{commit[:9]}` on `{m}`, {len(mine)} runs ({what}):\n")
                    slow = {run_label(r): x for r, x in zip(mine, slow_factors(mine, records))
                            if in_slow_state(x)}
                    print(agreement_markdown(agreement(mine), slow=slow) + "\n")
        if not found:
            print("report: fewer than two over-C++ runs of that commit (scripts/bench overhead)", file=sys.stderr)
        return 0 if found else 1
    if args.commit:
        runs = [(m, d) for m, d in runs if d["commit_hash"].startswith(args.commit)]
    if not runs:
        print("report: no results (run scripts/bench run first)", file=sys.stderr)
        return 1
    described = results.suite(args.results)  # asv's benchmarks.json (not the `suite` module)
    rows = overview_rows(runs, steps, {}, {n: b.get("param_names", []) for n, b in described.items()},
                         {m: results.overhead_runs(args.results, m) for m in machines}, suite_differs(),
                         {n: b.get("version") for n, b in described.items()})
    print("\n\n".join(markdown([r for r in rows if r["machine"] == m]) for m in dict.fromkeys(r["machine"] for r in rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
