"""Stage 3, results: the over-C++ records read as the history holds them: which runs of a commit
are in the fast state, which agree, and what a cell or a report says of them. The pages and reports
read over C++ here; ``cuda_bench.compare.overcpp`` measures it."""

from __future__ import annotations

import collections
import itertools
import re
import statistics
from pathlib import Path

from cuda_bench.foundations import stats
from cuda_bench.foundations.names import case_name, split_case
from cuda_bench.foundations.text import (
    TARGET_NS,
    build_words,
    fmt_ns,
    number,
    signed,
    times,
    times_span,
)
from cuda_bench.results import records


def run_kind(record):
    """What makes two over-C++ records of one commit comparable: the same twins (``twins``, their
    version) timed the same way (``layouts``) and read the same way (``state``: "fast", the medians
    over the processes in the fast state, ``stats.fast_state``; "all" for records from before that):
    ``(twins, layouts, state)``, or None for a record older than the twins field."""
    settings = record["settings"]
    return (record["twins"], settings["layouts"], settings["state"]) if record["twins"] else None


def fast_kind(kind):
    """Whether records of this :func:`run_kind` read each ratio over the processes in the fast
    state."""
    return kind is not None and kind[2] == "fast"


# A run is in the fast state by the rule a process is (stats.FAST_WINDOW): its fast-state processes
# within that window of the fastest run's (read on the C++ twins: slow_factors); a run further off
# had no fast process.
SLOW_STATE = stats.FAST_WINDOW


def in_slow_state(factor):
    """Whether a run's :func:`slow_factors` (None: not read in the fast state) is above
    :data:`SLOW_STATE`."""
    return factor is not None and factor > SLOW_STATE


def slow_state(spread):
    """A case's ``slower`` factor (:func:`over_cpp_cases`) when it is above :data:`SLOW_STATE`, else
    None."""
    slower = (spread or {}).get("slower")
    return slower if in_slow_state(slower) else None


def slow_factors(runs, reference=()):
    """Per over-C++ record (oldest first), for those read in the fast state: how much slower the
    state its processes ran in was than the fastest recorded, read on the C++ twins: the median over
    its cases of the twin's time (``cpp_ns``) over the lowest ``cpp_ns`` of that case in ``runs``
    and ``reference`` (the machine's other over-C++ runs, of any commit: the twins do not depend on
    cuda-python, so a commit measured once is judged too) of the same kind (:func:`run_kind`); None
    for the others. The twins slow down with the state as Python does (on the sixteen H200 runs at
    cb56ab9f9 the same factor read on the Python side differs by at most 0.11). Above
    :data:`SLOW_STATE` the run probably had no process in the fast state, so its fast-state ratios
    are the fastest of the slow processes and read high."""
    fastest = {}  # (kind, case): the lowest C++ time of the case over the runs of that kind
    for r in [*reference, *runs]:
        kind = run_kind(r)
        for c in r["cases"] if fast_kind(kind) else ():
            if c["cpp_ns"] > 0:
                key = (kind, c["name"])
                fastest[key] = min(fastest.get(key, c["cpp_ns"]), c["cpp_ns"])
    out = []
    for r in runs:
        kind = run_kind(r)
        ratios = [
            c["cpp_ns"] / fastest[(kind, c["name"])]
            for c in r["cases"]
            if fast_kind(kind) and c["cpp_ns"] > 0
        ]
        out.append(statistics.median(ratios) if ratios else None)
    return out


def slow_run_note(runs, reference=()):
    """For the newest of one commit's over-C++ runs (oldest first; what ``scripts/bench overhead``
    has just measured; ``reference``: the machine's other runs, as for :func:`slow_factors`): a line
    saying that it ran in the slow state, or None."""
    factor = slow_factors(runs, reference)[-1] if runs else None
    if not in_slow_state(factor):
        return None
    return (
        f"this run's C++ twins ran {times(factor)} slower than their fastest recorded run on this "
        f"machine (the slow state: above {times(SLOW_STATE, 2)}); probably no process was in the "
        "fast state, so its ratios read high. The overview leaves it out where another run of "
        f"{runs[-1]['commit'][:9]} measured the case, and marks it where none did; run it again "
        "later."
    )


def repeat_note(runs, reference=()):
    """For the newest of one commit's over-C++ runs (oldest first; what ``scripts/bench overhead``
    has just measured; ``reference`` as for :func:`slow_factors`): how it agrees (:func:`agreement`)
    with the earlier run of the commit, of the same kind, nearest the fast state and not in the slow
    state: the issue's test, read as soon as a run ends, with the twins' control. None when there is
    no such run."""
    if len(runs) < 2:
        return None
    newest, kind = runs[-1], run_kind(runs[-1])
    factors = slow_factors(runs, reference)
    earlier = [
        (x, r)
        for r, x in zip(runs[:-1], factors)
        if run_kind(r) == kind and fast_kind(kind) and x is not None and not in_slow_state(x)
    ]
    if not earlier:
        return None
    factor, base = min(earlier, key=lambda e: e[0])
    (pair,) = agreement([base, newest])
    if not pair["cases"]:
        return None
    when = {True: "on the same machine start", False: "on another machine start", None: ""}[
        pair["same_start"]
    ]
    if pair["same_day"] is False:
        when = f"{when}, another day" if when else "on another day"
    still = _still(pair)
    return (
        f"against {pair['a']} (the earlier run of {newest['commit'][:9]} nearest the fast state, "
        f"{times(factor, 2)}{', ' + when if when else ''}): {pair['agree']} of {pair['cases']} "
        "cases "
        f"({_share(pair)}) give the same ratio within {AGREE:.0%}; {pair['twins_moved']} C++ twins "
        f"moved more than {AGREE:.0%} beside the others (the machine, not Python), and over the "
        f"other {still['cases']} cases {still['agree']} ({_share(still)}) agree"
    )


def same_work(a, b):
    """Whether two over-C++ measurements of a case (cases of records) timed the same Python work:
    the same asv version of its benchmark (``compare.stamp_versions``; records older than the twins'
    version field name none, and match only each other)."""
    return a["version"] == b["version"]


def over_cpp_cases(runs, reference=(), versions=None):
    """Per case, from the over-C++ runs of one commit (oldest first): one measurement of it and how
    far its ratio moved over the runs of that one's kind (:func:`run_kind`) that measured it: {case:
    (case dict, {"low", "high", "runs", "starts", "each"[, "slower"][, "left_out"]})}, the second
    None where the record does not say which twins it timed (``starts``: how many machine starts
    those runs name; runs on different starts differ more than runs on one; ``each``: every one of
    those runs' overhead interval, :func:`_each`, newest first, which a budget verdict is repeated
    on: ``budgets.status``). The kind is the newest record's
    that measured the case (a run of a few cases, ``-b``, hides no other case's); the measurement,
    among that kind's runs, the one nearest the fast state (the lowest :func:`slow_factors`,
    ``slower``, with ``reference`` the machine's other runs; the newest where the runs were not read
    in the fast state). A run in the slow state (above :data:`SLOW_STATE`) reads its ratios high, so
    it is neither the measurement nor in the range where a run of its kind that is not in that state
    measured the case (``left_out``: how many were left out);
    where none did, it is the measurement, and :func:`over_text` marks it. Only measurements of the
    same work (:func:`same_work`) make one range; with ``versions`` ({benchmark: its version now}),
    a case measured under another version of its benchmark is left out."""
    kinds = [run_kind(r) for r in runs]
    slower = slow_factors(runs, reference)  # read on every case's twin, whatever its Python version
    slow = [in_slow_state(x) for x in slower]
    if versions:

        def now(case):
            benchmark = split_case(case["name"])[0]
            return {"version": versions[benchmark]} if benchmark in versions else case

        runs = [r | {"cases": [c for c in r["cases"] if same_work(c, now(c))]} for r in runs]
    cases_of = [{c["name"]: c for c in r["cases"]} for r in runs]
    newest_first = list(reversed(range(len(runs))))
    out = {}
    for i in newest_first:
        for case in runs[i]["cases"]:
            name = case["name"]
            if name in out:
                continue
            if kinds[i] is None:
                out[name] = (case, None)
                continue
            found = [
                j
                for j in newest_first
                if kinds[j] == kinds[i]
                and name in cases_of[j]
                and same_work(case, cases_of[j][name])
            ]
            kept = [j for j in found if not slow[j]] or found
            # ties (runs not read in the fast state): newest
            pick = min(kept, key=lambda j: slower[j] or 0)
            ratios = [cases_of[j][name]["ratio"] for j in kept]
            spread = {
                "low": min(ratios),
                "high": max(ratios),
                "runs": len(kept),
                "starts": len({runs[j]["host"]["start"] for j in kept} - {None}),
                "each": [_each(runs[j], cases_of[j][name], OVER_KEYS) for j in kept],
            }
            if slower[pick] is not None:
                spread["slower"] = round(slower[pick], 3)
            if len(kept) < len(found):
                spread["left_out"] = len(found) - len(kept)
            out[name] = (cases_of[pick][name], spread)
    return out


#: the fields of an over-C++ case that hold its overhead over the C++ twin, in ns, with its interval
OVER_KEYS = ("over_low", "over_high", "coverage")


def _each(record, case, keys):
    """One run's interval of a case: [its machine start (None where the record does not say), low,
    high, coverage (None where the case does not say)], ``keys`` naming low, high and coverage."""
    low, high, coverage = keys
    return [(record.get("host") or {}).get("start"), case[low], case[high], case.get(coverage)]


#: the form every other form of an operation is compared with, in one process
REFERENCE = "bindings"


def forms_compared(runs, confidence=stats.CONFIDENCE):
    """Each form of an operation against its cuda.bindings form, paired within each worker process
    of one over-C++ run (``runs``: the records of one commit, oldest first): {case: {"py_ns",
    "cpp_ns"} (the run's fast-state medians), and for every form but cuda.bindings' "ratio", "low",
    "high" (the median over the processes of the form's ratio over its C++ twin divided by
    cuda.bindings' in the same process, with its order-statistic interval), "coverage" (that
    interval's), "processes" and "runs": {"each": that interval in every run that compared the two
    forms on the same work (:func:`same_work`), newest first, as :func:`over_cpp_cases` gives
    it}; "record": the run's date and the cuda-bindings it ran}.

    A process times every form beside the same C++ twin, so whatever state the process is in
    (its memory layout, the machine's fast or slow state) both forms meet it, and the ratio of
    their ratios leaves it out. Per operation case, the newest run that timed its cuda.bindings form
    with every process kept (no ``lost`` pair), and each other form in those same processes."""
    out, shown = {}, {}
    for record in reversed(runs):
        cases = {c["name"]: c for c in record["cases"]}
        for name, case in cases.items():
            benchmark, combo = split_case(name)
            if not combo or (name in shown and not same_work(case, shown[name])):
                continue
            reference = cases.get(case_name(benchmark, (f"'{REFERENCE}'", *combo[1:])))
            if not _aligned(reference, case, record):
                continue
            found = (
                _form_over_bindings(case, reference, confidence) if case is not reference else {}
            )
            if name in out:  # a run older than the one shown: its interval only
                if found:
                    out[name]["runs"]["each"].append(_each(record, found, FORM_KEYS))
                continue
            shown[name] = case
            out[name] = {
                "py_ns": case["py_ns"],
                "cpp_ns": case["cpp_ns"],
                "record": run_words(record),
            }
            if found:
                out[name] |= found | {"runs": {"each": [_each(record, found, FORM_KEYS)]}}
    return out


#: the fields of :func:`forms_compared` that hold a form over cuda.bindings' with its interval
FORM_KEYS = ("low", "high", "coverage")


def _form_over_bindings(case, reference, confidence):
    """``case`` over the cuda.bindings form ``reference`` of the same run, process by process:
    {"ratio", "low", "high", "coverage", "processes"}."""
    per = [
        a / b
        for a, b in zip(case["process_ratios"], reference["process_ratios"])
        if a > 0 and b > 0
    ]
    ratio, low, high, coverage = stats.median_interval(per, confidence)
    return {
        "ratio": ratio,
        "low": low,
        "high": high,
        "coverage": round(coverage, 4),
        "processes": len(per),
    }


def forms_in_runs(runs, picked):
    """:func:`forms_compared` of one commit's over-C++ ``runs``, each case read in the run
    ``picked`` ({case: (its measurement, spread)}, :func:`over_cpp_cases`) took it from: a cell's
    time in one process, its ratio over cuda.bindings' and its cost over C++ then come from one run.
    Where that run did not time the case beside cuda.bindings' form in the same processes, its time
    alone; a case no run was picked for, as :func:`forms_compared` reads it."""
    run_of = {id(case): record for record in runs for case in record["cases"]}
    per_run, out = {}, {}
    for name, (case, _) in picked.items():
        record = run_of.get(id(case))
        if record is None:
            continue
        if id(record) not in per_run:
            per_run[id(record)] = forms_compared([record])
        out[name] = per_run[id(record)].get(name) or {
            "py_ns": case["py_ns"],
            "cpp_ns": case["cpp_ns"],
            "record": run_words(record),
        }
    return forms_compared(runs) | out


def run_words(record):
    """What names an over-C++ run on the pages: its date and time, and the cuda-bindings it ran."""
    return {
        "date": record["date"],
        "bindings": build_words(None, (record.get("versions") or {}).get("cuda-bindings")),
    }


def _aligned(reference, case, record):
    """Whether ``case`` and the cuda.bindings form ``reference`` of one over-C++ ``record`` were
    timed in the same processes, in the same order: every process of the run kept for both."""
    if reference is None:
        return False
    lost = record.get("lost") or {}
    return all(
        c["name"] not in lost
        and len(c.get("process_ratios") or ()) == c.get("processes")
        and c.get("processes") == reference.get("processes")
        for c in (case, reference)
    )


def _counts(runs):
    return runs["runs"], runs.get("left_out", 0)


def usual_runs(rows):
    """The (runs, left out in the slow state) that most over-C++ ranges of one machine's rows are
    over, or None: a table says it once (:func:`usual_runs_text`) and :func:`over_text` leaves it
    out of those cells."""
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
    """'+120 ns ×1.52 ✓': Python over C++ per call, the ratio, and the 1 us target; with the
    range of the ratio over the commit's runs, and how many runs it is over unless that is ``usual``
    (:func:`usual_runs`)."""
    if "over_cpp_ns" not in cell:
        return ""
    x = "" if cell["over_cpp_x"] is None else f" {times(cell['over_cpp_x'], 2)}"
    over = cell.get("over_cpp") or {}
    runs = over.get("runs") or {}
    several = runs.get("runs", 0) > 1
    said = several and _counts(runs) == usual  # the count is above the table
    # a paired measurement is not asv's: the times it compares are said, not left to be inferred
    # from the row's
    compared = (
        [f"{fmt_ns(over['py_ns'])} against {fmt_ns(over['cpp_ns'])} in one process"]
        if number(over.get("py_ns")) and number(over.get("cpp_ns"))
        else []
    )
    spread = (
        [times_span(runs["low"], runs["high"]) + ("" if said else f" in {runs['runs']} runs")]
        if several
        else []
    )
    if runs.get("left_out") and not said:
        spread.append(f"{runs['left_out']} in the slow state left out")
    spread = "; ".join([*compared, *([", ".join(spread)] if spread else [])])
    spread = f" ({spread})" if spread else ""
    slow = " ⚠ slow state" if slow_state(runs) else ""
    return (
        signed(cell["over_cpp_ns"] * 1e-9)
        + x
        + spread
        + (" ✓" if cell["over_cpp_ns"] < TARGET_NS else " ✗")
        + slow
    )


# cuda-python-bench issue 15: two over-C++ runs give the same ratio within 5% for >= 90% of rows
AGREE = 0.05


def run_label(record):
    """An over-C++ record's name: its ``--out`` folder where the command names one, else its
    date."""
    found = re.search(r"--out\s+\S*?([^/\s]+)/?(?:\s|$)", record.get("command") or "")
    return found.group(1) if found else record.get("date", "?")


def apart(a, b):
    """How far two ratios are apart, either way: max(a/b, b/a) - 1."""
    return max(a / b, b / a) - 1


SHARE = 0.9  # ... for at least this share of the cases


def agreement(runs, leave_out=(), within=AGREE):
    """Every pair of over-C++ runs (of one commit): the cases both measured with the same timed work
    (:func:`same_work`; less ``leave_out``), how many
    give the same ratio within ``within`` either way, the cases furthest apart, whether the two ran
    on one machine start (``same_start``: True, False, or None where a record does not say) and on
    one day (UTC).

    The control (the twins' own A/A): the C++ twins do not depend on cuda-python, so between two
    runs each twin should move as the run's others do (the state). ``twins_moved`` counts the cases
    whose twin moved by more than ``within`` beside the median of all twins' moves; their ratios
    move with it whatever Python does (the launch twins, with the driver's launch path:
    docs/method.md, rule 12).
    ``still_agree`` is how many of the other ``cases - twins_moved`` give the same ratio.
    [{"a", "b", "cases", "agree", "furthest": [(name, b/a - 1)], "same_start", "same_day",
    "twins_moved", "still_agree"}]"""
    out = []
    for first, second in itertools.combinations(runs, 2):
        a = {c["name"]: c for c in first["cases"]}
        b = {c["name"]: c for c in second["cases"]}
        names = [n for n in a if n in b and n not in leave_out and same_work(a[n], b[n])]
        same = {n: apart(a[n]["ratio"], b[n]["ratio"]) <= within for n in names}
        furthest = sorted(
            ((n, b[n]["ratio"] / a[n]["ratio"] - 1) for n in names),
            key=lambda x: -apart(a[x[0]]["ratio"], b[x[0]]["ratio"]),
        )
        moves = {
            n: b[n]["cpp_ns"] / a[n]["cpp_ns"]
            for n in names
            if a[n].get("cpp_ns", 0) > 0 and b[n].get("cpp_ns", 0) > 0
        }
        usual = statistics.median(moves.values()) if moves else 1.0
        moved = {n for n, x in moves.items() if apart(x, usual) > within}
        starts = first["host"]["start"], second["host"]["start"]
        out.append(
            {
                "a": run_label(first),
                "b": run_label(second),
                "cases": len(names),
                "agree": sum(same.values()),
                "furthest": furthest[:3],
                "same_start": None if None in starts else starts[0] == starts[1],
                "same_day": None
                if not (first.get("date") and second.get("date"))
                else first["date"][:10] == second["date"][:10],
                "twins_moved": len(moved),
                "still_agree": sum(same[n] for n in names if n not in moved),
            }
        )
    return out


def agreement_markdown(pairs, within=AGREE, share=SHARE, slow=None):
    """The pairs as a table, then per kind of pair (one machine start, two, unknown; two days) how
    many reach ``share``; ``slow`` ({run label: :func:`slow_factors`} of the runs in the slow
    state): named, and the counts again without them (the overview leaves them out where another run
    measured the case)."""
    start = {True: "same", False: "different", None: "?"}
    lines = [
        f"| run A | run B | machine start | day | cases | same ratio within {within:.0%} | "
        f"C++ twin moved beside the others (> {within:.0%}) | same ratio where it did not | "
        f"furthest apart (B/A − 1) |",
        "|---|---|---|---|--:|--:|--:|--:|---|",
    ]
    for p in pairs:
        furthest = ", ".join(
            f"`{re.sub(r'[.]time_[a-z_]+', '', n.split('.', 1)[-1])}` {d:+.1%}"
            for n, d in p["furthest"]
        )
        lines.append(
            f"| {p['a']} | {p['b']} | {start[p['same_start']]} | {start[p['same_day']]} | "
            f"{p['cases']} | **{p['agree']} ({_share(p)})** | {p['twins_moved']} | "
            f"{p['still_agree']} ({_share(_still(p))}) | {furthest} |"
        )
    lines += ["", *_reaching(pairs, share)]
    if slow:
        named = ", ".join(f"{label} {times(factor)}" for label, factor in slow.items())
        lines += [
            "",
            f"Runs in the slow state (C++ twins more than {times(SLOW_STATE, 2)} slower than their "
            "fastest "
            f"recorded run on the machine; the overview leaves them out): {named}. Without them:",
            "",
        ]
        lines += _reaching([p for p in pairs if p["a"] not in slow and p["b"] not in slow], share)
    return "\n".join(lines)


def _reaching(pairs, share):
    lines = []
    for key, kind, words in (
        ("same_start", True, "on one machine start"),
        ("same_start", False, "across machine starts"),
        ("same_start", None, "where a record does not say its machine start"),
        ("same_day", False, "on different days"),
    ):
        mine = [p for p in pairs if p[key] is kind and p["cases"]]
        if mine:
            shares = sorted(p["agree"] / p["cases"] for p in mine)
            still = sorted(s["agree"] / s["cases"] for s in map(_still, mine) if s["cases"])
            line = (
                f"- {words}: {sum(x >= share for x in shares)} of {len(mine)} pairs agree on at "
                f"least {share:.0%} of the cases (from {shares[0]:.0%} to {shares[-1]:.0%})"
            )
            if still:
                line += (
                    "; on the cases whose C++ twin did not move beside the others, "
                    f"{sum(x >= share for x in still)}"
                    f" of {len(still)} (from {still[0]:.0%} to {still[-1]:.0%})"
                )
            lines.append(line)
    return lines


def _share(pair):
    return f"{pair['agree'] / pair['cases']:.0%}" if pair["cases"] else "-"


def _still(pair):
    """A pair counted over the cases whose C++ twin did not move beside the others."""
    return {"agree": pair["still_agree"], "cases": pair["cases"] - pair["twins_moved"]}


def agreement_report(folder, commit_prefix=""):
    """How far the recorded over-C++ runs of one commit (the newest that starts with
    ``commit_prefix``) agree, every pair of runs of one kind (:func:`run_kind`), as Markdown; None
    when the commit has fewer than two."""
    machine_name = Path(folder).name
    runs = records.read(folder, "over-cpp")
    commit = next(
        (r["commit"] for r in reversed(runs) if r["commit"].startswith(commit_prefix)), None
    )
    kinds = {}  # runs of the same twins timed the same way, compared among themselves
    for r in runs:
        if r["commit"] == commit:
            kinds.setdefault(run_kind(r), []).append(r)
    out = []
    for kind, mine in kinds.items():
        if len(mine) > 1:
            what = (
                f"twins {kind[0]}, {kind[1]} layouts, ratios over {kind[2]} processes"
                if kind
                else "records that do not say which twins they timed"
            )
            slow = {
                run_label(r): x for r, x in zip(mine, slow_factors(mine, runs)) if in_slow_state(x)
            }
            out.append(
                f"Over C++ at `{commit[:9]}` on `{machine_name}`, {len(mine)} runs ({what}):\n\n"
                + agreement_markdown(agreement(mine), slow=slow)
            )
    return "\n\n".join(out) or None
