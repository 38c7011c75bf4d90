"""Stage 5, publish: the history as Markdown (``cuda-bench report``): the front page (main's head,
its paired verdicts, the open regressions, each operation), each release against the one before, the
paired steps, the release ladder's medians across commits, and the nightly issue.
"""

from __future__ import annotations

from cuda_bench.compare import bisect
from cuda_bench.foundations import calls, stats
from cuda_bench.foundations.counts import UNSEEN
from cuda_bench.foundations.names import HARNESS, short_name
from cuda_bench.foundations.text import (
    PER_CALL,
    TARGET_NS,
    asv_word,
    cleared_text,
    date_text,
    fmt,
    interval,
    last_line,
    md,
    measurements,
    number,
    per_call,
    standing,
    times,
)
from cuda_bench.publish import summary
from cuda_bench.publish.overview import APIS, TITLES
from cuda_bench.results import asv_files, history, overcpp_read
from cuda_bench.results.counts_read import case_label

# --- Markdown -------------------------------------------------------------------------------------
MARKS = {"regression": " ▲", "improvement": " ▼"}


def cell_text(row, api):
    """A cell, one time in it: the form's time in one process and its ratio over cuda.bindings'
    with the interval, where an over-C++ run of the commit timed it; else asv's median at the commit
    ("asv ..."); ▲ (slower) or ▼ (faster) with the paired step's ratio and interval where that step
    to the commit judged the case so."""
    c = row["cells"].get(api)
    if c is None:
        return ""
    one = c.get("one_process")
    if one:
        text = fmt(one["py_ns"] * 1e-9) + (f" {interval(one)}" if "ratio" in one else "")
        text += " (asv unreadable)" if c.get("unreadable") else ""
    elif number(c["value"]):
        text = f"asv {fmt(c['value'])}"
    else:
        text = asv_word(c)
    step = c.get("step") or {}
    mark = MARKS.get(step.get("verdict"))
    return text + (f"{mark} {interval(step)}" if mark else "")


def markdown(rows):
    """The operations table of one machine's rows (``overview.overview_rows``): asv's median per
    call at the commit per library, a mark where the paired step to it judged the case, and each
    Python form over its C++ twin."""
    first = rows[0]
    usual = overcpp_read.usual_runs(rows)
    paired = any("over_cpp" in c for r in rows for c in r["cells"].values())
    how = (
        "timed in turn in one process (`cuda-bench over-cpp`)"
        if paired
        else "net of the floor against the twin"
    )
    ranges = (
        f" Where a range follows, it is over {overcpp_read.usual_runs_text(usual)} of this commit."
        if usual
        else ""
    )
    one = sorted(
        {
            (
                c["one_process"]["record"]["date"][:16].replace("T", " "),
                c["one_process"]["record"]["bindings"],
            )
            for r in rows
            for c in r["cells"].values()
            if c.get("one_process")
        }
    )
    runs = "; ".join(f"{date} UTC, cuda-bindings {bindings}" for date, bindings in one)
    timed = (
        f"In one process (the over-C++ run{'s' if len(one) > 1 else ''} of {runs}): each form's "
        "time per call, and under cuda.core and CuPy their time over cuda.bindings', paired "
        f"process by process, with its {stats.CONFIDENCE:.0%} interval; "
        if one
        else ""
    )
    lines = [
        f"{timed}where no over-C++ run timed a form, asv's median time per call at "
        f"`{first['commit'][:9]}`, marked asv (one unpaired run: context, not a verdict; "
        f"cuda-bindings {first['build']}); one time per cell; ▲ slower, ▼ faster: the paired "
        "step to this commit says so, with its ratio "
        "and interval. Harness floor (what the timing loop itself costs per call): "
        f"{fmt(first['floor']) if number(first['floor']) else 'not measured'}. "
        '"over C++": the Python form '
        f"against its C++ twin, per call and as a ratio, {how}; ✓ under cuda-python's target of "
        f"{fmt(TARGET_NS * 1e-9)} over C++ (#1580), ✗ above.{ranges} ★: the sides do different "
        "work (below).",
        "",
        "| operation | "
        + " | ".join(TITLES[a] for a in APIS)
        + " | cuda.core over C++ | cuda.bindings over C++ |",
        "|---|" + "---:|" * (len(APIS) + 2),
    ]
    marked = {}
    for row in rows:
        short = short_name(row["benchmark"])
        star = " ★" if row.get("differs") else ""
        if star:
            marked[short] = row["differs"]
        case = " ".join(row["case"])
        core, bindings = (
            overcpp_read.over_text(row["cells"].get(a, {}), usual) for a in ("core", "bindings")
        )
        lines.append(
            f"| `{short}`{star}{' ' + case if case else ''} | "
            + " | ".join(cell_text(row, a) for a in APIS)
            + f" | {core} | {bindings} |"
        )
    if marked:
        lines += ["", *(f"★ `{name}`: {reason}." for name, reason in marked.items())]
    if first.get("older"):
        lines += ["", OLDER.format(names=", ".join(f"`{n}`" for n in first["older"]))]
    return "\n".join(lines)


def _counts(found):
    return " · ".join(summary.counts_words(found))


def _one_side(step):
    """The cases only one build of a step has, named (``summary.one_side``), as Markdown lines;
    none for none."""
    found = summary.one_side(step)
    if not found:
        return []
    return [
        "",
        f"<details><summary>{len(found)} on one side only</summary>",
        "",
        *(f"- {calls.named(name)}: {words}" for name, _, words in found),
        "",
        "</details>",
    ]


def _work(told, where=""):
    """What changed in the work per call over a step (``summary.work_changed``; ``where``: which
    step), as Markdown lines; none where a side was not counted."""
    work = told.get("work")
    if work is None:
        return []
    notes = "".join(f" {note}" for note in work["caveats"])
    changed, said = summary.work_said(work)
    if not changed:
        return ["", f"Work per call{where}: {said}.{notes}"]
    return [
        "",
        f"Work per call{where} {said} (exact counts):{notes}",
        "",
        *(f"- `{case_label(name)}`: {text}" for name, text in work["changed"].items()),
    ]


def _case_rows(cases):
    return [
        f"| {calls.named(c['name'])} | {interval(c)} | {summary.status_word(c)} | {per_call(c)} |"
        for c in cases
    ]


CASE_HEAD = [
    f"| case | ratio [{stats.CONFIDENCE:.0%} interval] | status | {PER_CALL} |",
    "|---|--:|---|--:|",
]


def _verdict_rows(told, head):
    """The front page's verdict table's rows: against the previous measured commit, the newest
    release, and the regressions still open on main."""
    lines = []
    previous, release = told["previous"] or {}, told["release"]
    if previous.get("step"):
        lines.append(
            f"| `{previous['name']}`, the previous measured commit | "
            f"{_counts(previous['described']['counts'])} |"
        )
    elif previous.get("commit"):
        lines.append(
            f"| `{previous['name']}`, the previous measured commit | no paired step yet "
            "(`cuda-bench steps`) |"
        )
    if release and release.get("step"):
        lines.append(
            f"| {release['name']}, the newest release | {_counts(release['described']['counts'])} |"
        )
    elif release:
        lines.append(
            f"| {release['name']}, the newest release | not measured yet: the history has no "
            f"paired step from {release['name']} to `{head['name']}` (`cuda-bench ladder` on a GPU "
            "machine) |"
        )
    opened = told["open"]
    confirmed = sum(bool(c.get("confirmed")) for _, c in opened)
    ladder = (
        f"; {told['release_open']} between releases (`cuda-bench report --releases`)"
        if told["release_open"]
        else ""
    )
    unconfirmed = len(opened) - confirmed
    still_open = f"{confirmed} confirmed · {unconfirmed} not yet confirmed" if opened else "none"
    lines.append(f"| regressions still open on main | {still_open}{ladder} |")
    return lines


def landing_markdown(told, rows, known):
    """The front page of one machine as Markdown: main's head, its paired verdicts against the
    previous measured commit and against the newest release, the open regressions, then each
    operation (:func:`markdown`)."""
    head, lost = told["head"], told.get("lost_head")
    lines = [f"## {told['machine']}", ""]
    if lost:
        title = f" “{md(lost['title'])}”" if lost["title"] else ""
        where = f"`{lost['file']}`" + (f" line {lost['line']}" if lost["line"] else "")
        lines += [
            f"Main's head: `{lost['name']}`{title}: **its results file could not be read** "
            f"({where}: {lost['why']}). Nothing below is of it.",
            "",
        ]
    if head is None:
        return "\n".join([*lines, "No commit of main measured on this machine yet."])
    title = f" “{md(head['title'])}”" if head["title"] else ""
    said = "The newest commit of main whose results could be read" if lost else "Main's head"
    lines += [
        f"{said}: `{head['name']}`{title}, committed {date_text(head['date'])[:10]}; "
        f"asv measured it {date_text(head['measured'])}.",
        "",
        "| against | paired verdict |",
        "|---|---|",
    ]
    lines += _verdict_rows(told, head)
    previous, release, opened = told["previous"] or {}, told["release"], told["open"]
    for part, heading in (
        (previous, "Changed since the previous measured commit"),
        (release or {}, "Changed since the newest release"),
    ):
        if part.get("step") and (
            part["described"]["changed"] or (part["described"]["work"] or {}).get("changed")
        ):
            lines += ["", f"### {heading}"]
            if part["described"]["changed"]:
                lines += ["", *CASE_HEAD, *_case_rows(part["described"]["changed"])]
            lines += _work(part["described"])
        elif part.get("step"):
            lines += _work(
                part["described"],
                " since the previous measured commit"
                if part is previous
                else " since the newest release",
            )
    if any(
        part.get("step") and part["described"]["work"] is not None
        for part in (previous, release or {})
    ):
        lines += ["", f"_{UNSEEN}_"]
    if opened:
        lines += [
            "",
            "### Open regressions on main",
            "",
            *(
                f"- {calls.named(c['name'])} {interval(c)} at "
                f"`{summary.name(s['base'], known)}` → "
                f"`{summary.name(s['head'], known)}`: {summary.status(c)}"
                for s, c in opened
            ),
        ]
    if rows:
        lines += ["", f"### Each operation at `{head['name']}`", "", markdown(rows)]
    return "\n".join(lines)


def landing(told_by_machine, rows, known):
    """:func:`landing_markdown` of every machine (``cuda-bench report --markdown``:
    docs/results.md)."""
    return "\n\n".join(
        [
            "# Is main fine?",
            "Generated by `cuda-bench report --markdown` from `results/`: the "
            "dashboard's front page, machine by machine. How to read it: "
            "[method.md](method.md#words); "
            f"{stats.CONFIRMED_RULE}.",
        ]
        + [
            landing_markdown(told, [r for r in rows if r["machine"] == machine], known)
            for machine, told in told_by_machine.items()
        ]
    )


def means_text(geomean):
    """A step's geometric mean of the ratios per library (``summary.geomean``), as the Releases
    page and report say it: 'cuda.core ×0.930 (34) · cuda.bindings ×1.002 (41)'."""
    return " · ".join(
        f"{TITLES[api]} {times(geomean[api][0])} ({geomean[api][1]})"
        for api in ("core", "bindings", "cupy", "cpp")
        if api in geomean
    )


def releases_markdown(machine, found, known):
    """Each release against the one before it, newest first (``summary.releases``): counts, the
    geometric mean of the ratios per library, the changed cases slower first; and the newest release
    against main's head, or that the history lacks that step (``cuda-bench report --releases``)."""
    lines = [f"## {machine}"]
    newest, head = found["newest"], found["head"]
    told = found["to_head"]
    if newest and head and told is None:
        lines += [
            "",
            f"### {summary.name(newest, known)} → main's head `{summary.name(head, known)}`",
            "",
            f"Not measured yet: the history has no paired step from {summary.name(newest, known)} "
            "to main's head. `cuda-bench ladder` on a GPU machine measures every release, then "
            "main's head, and pairs each with the one before it.",
        ]
    for told in ([found["to_head"]] if found["to_head"] else []) + found["ladder"]:
        means = means_text(told["geomean"])
        lines += ["", f"### {told['base_name']} → {told['head_name']}", ""]
        if told["environment"]:
            lines += [
                f"**The environment changed too: {summary.environment_words(told['step'])}.** Each "
                "side ran the wheels named here, not built from these commits: the cuda.bindings "
                "rows are put down to that change, listed apart and not counted as this step's.",
                "",
            ]
        lines += [
            f"{_counts(told['counts'])}. Geometric mean of the ratios per library (cases): {means}."
        ]
        lines += [*_one_side(told["step"]), ""]
        if told.get("across"):
            lines += [
                f"Across {summary.environment_words(told['across']['step'])} (each release with "
                f"the wheel it pinned) the same commits read {_counts(told['across']['counts'])}. "
                "The verdicts here are of one cuda-bindings on both sides: the release's own "
                "change.",
                "",
            ]
        if told["changed"]:
            lines += [*CASE_HEAD, *_case_rows(told["changed"])]
        put_down = [c for c in told["put_down"] if c["verdict"] in summary.CHANGES]
        if put_down:
            lines += [
                "",
                f"Changed with {summary.environment_words(told['step'])}:",
                "",
                *CASE_HEAD,
                *_case_rows(put_down),
            ]
        lines += _work(told)
        if told["not_reproduced"]:
            lines += [
                "",
                "Not reproduced: "
                + ", ".join(
                    f"{calls.named(c['name'])} flagged {interval(c)}, {cleared_text(c)}"
                    for c in told["not_reproduced"]
                )
                + ".",
            ]
    if not found["ladder"]:
        lines += ["", "No release measured against the one before it on this machine."]
    if any(told.get("work") is not None for told in [*found["ladder"], found["to_head"] or {}]):
        lines += ["", f"_{UNSEEN}_"]
    return "\n".join(lines)


OLDER = (
    "Not in the table: {names}, measured at this commit by an earlier version of the benchmark (it "
    "has changed since; asv does not compare versions either)."
)


def across(runs, columns, api):
    """One row per operation and case, one column per ``LABEL=COMMIT`` (the release ladder):
    ``api``'s median per call, raw, and the harness floor of each run on top."""
    picked = []
    for column in columns:
        name, _, prefix = column.rpartition("=")
        found = [d for _, d in runs if d["commit_hash"].startswith(prefix)]
        if not found:
            raise SystemExit(f"report: no results for commit {prefix}")
        picked.append((name or prefix, asv_files.values(found[-1])))
    keys = [k for k in picked[-1][1] if k[1][:1] == (f"'{api}'",)]
    for _, vals in picked[:-1]:
        keys += [k for k in vals if k[1][:1] == (f"'{api}'",) and k not in keys]
    floors = [v.get((HARNESS, ("'noop'",))) for _, v in picked]
    lines = [
        "| operation | case | " + " | ".join(name for name, _ in picked) + " |",
        "|---|---|" + "---:|" * len(picked),
        "| harness floor |  | "
        + " | ".join(fmt(f) if number(f) else "not measured" for f in floors)
        + " |",
    ]
    for name, combo in sorted(keys):
        cells = []
        for _, vals in picked:
            value = vals.get((name, combo))
            if (name, combo) not in vals:
                cells.append("—")  # the suite had no such benchmark or case then
            else:
                cells.append(
                    fmt(value) if number(value) else "failed" if value is None else "skipped"
                )
        case = " ".join(c.strip("'") for c in combo[1:])
        lines.append(f"| `{short_name(name)}` | {case} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def steps_markdown(machine_name, steps):
    """The history's paired steps of one machine: each step's counts, then every case a step
    flagged."""
    lines = [
        f"Paired steps on `{machine_name}` (each newly measured commit against the previous one):",
        "",
        "| base → head | date | "
        + " | ".join(words for _, words in summary.COUNT_WORDS)
        + " | seconds |",
        "|---|---|" + "--:|" * (len(summary.COUNT_WORDS) + 1),
    ]
    for step in steps:
        where = f"`{step['base'][:9]}` → `{step['head'][:9]}`"
        if history.identical(step):
            lines.append(
                f"| {where} | {step.get('date', '')[:10]} | identical builds: nothing to measure |"
                + " |" * len(summary.COUNT_WORDS)
            )
            continue
        found = summary.counts(step)
        lines.append(
            f"| {where} | {step.get('date', '')[:10]} | "
            + " | ".join(str(found[key]) for key, _ in summary.COUNT_WORDS)
            + f" | {step.get('seconds', 0):.0f} |"
        )
    for step in steps:
        where = f"`{step['base'][:9]}` → `{step['head'][:9]}`"
        if history.environment_change(step):
            lines.append(
                f"- {where}: the environment changed too ({summary.environment_words(step)}); its "
                "cuda.bindings cases are put down to that change: "
                + (
                    ", ".join(
                        f"`{c['name']}` {interval(c)}"
                        for c in summary.put_down(step)
                        if c["verdict"] in summary.CHANGES
                    )
                    or "none changed"
                )
            )
        for name, _, words in summary.one_side(step):
            lines.append(f"- {where} {calls.named(name)}: {words}")
        for case in summary.counted(step):
            if case["verdict"] in ("regression", "not reproduced"):
                # the versions only ever follow a regression's
                said = standing(case, step.get("versions"))
                said = (
                    f"{said}, {cleared_text(case)}"
                    if case["verdict"] == "not reproduced"
                    else f"regression ({said})"
                )
                lines.append(f"- {where} {calls.named(case['name'])}: {said}: {measurements(case)}")
        for name, text in sorted((step.get("errors") or {}).items()):
            lines.append(f"- {where} `{name}`: not measured: {last_line(text)}")
        for name, text in sorted((step.get("lost") or {}).items()):
            lines.append(f"- {where} `{name}`: measured from fewer process pairs: {text}")
    return "\n".join(lines)


MARKER = "<!-- cuda-python-bench:regressions -->"


def unreadable_markdown(found, results_dir):
    """What could not be read (``asv_files.noted``), on top of any report: each file and line, and
    why; "" when all of the history was read."""
    if not found:
        return ""
    return (
        "\n".join(
            [
                "> **Part of the history could not be read**, and what follows leaves it out: it "
                "may say otherwise once that is mended (`cuda-bench report` exits 2 until then).",
                ">",
                *(
                    f"> - `{asv_files.shown(path, results_dir)}`{asv_files.place(line)}: {why}"
                    for path, line, why in found
                ),
            ]
        )
        + "\n"
    )


def bisect_text(step, case, known, bisects):
    """What the issue says under a flag's commits of the commit that made the case slower: the one
    a bisect found, or its other answer (``bisect.answered_text``); or the command that finds it
    ("" where the step joins adjacent commits)."""
    told = bisect.answered(step, case["name"], bisects)
    if told is None:
        command = bisect.command_for(step, case["name"], known)
        return f"<br>which commit: `{command}`" if command else ""
    kind, what = told
    if kind == bisect.FOUND:
        return "<br>bisected: " + ", ".join(f"`{c[:9]}` {interval(found)}" for c, found in what)
    return "<br>" + bisect.answered_text(told)


def issue_body(
    steps_by_machine,
    commit_url="https://github.com/NVIDIA/cuda-python/commit/",
    known=None,
    bisects_by_machine=None,
):
    """The nightly issue: every case a paired step of main's history flagged and another start did
    not clear, newest first; under the commits of a step that spans several, the commit a bisect
    found (``bisects_by_machine``) or the command that finds it. The release ladder's steps, and
    the newest release against main's head (``summary.step_kind``, with ``known``:
    ``asv_files.commits``), are counted in a line each, as the Releases page lists them.
    (text, count)"""
    known = known or {}
    rows, other = [], {"release": 0, "since release": 0}
    for machine_name, steps in sorted(steps_by_machine.items()):
        kinds = {(s["base"], s["head"]): summary.step_kind(s, known) for s in steps}
        for kind in other:
            other[kind] += len(
                history.flagged_steps([s for s in steps if kinds[(s["base"], s["head"])] == kind])
            )
        for step, case in history.flagged_steps(
            [s for s in steps if kinds[(s["base"], s["head"])] == "main"]
        ):
            base, head = step["base"], step["head"]
            which = bisect_text(step, case, known, (bisects_by_machine or {}).get(machine_name, []))
            rows.append(
                f"| {machine_name} | {calls.named(case['name'])} | "
                f"[`{summary.name(base, known)}`]({commit_url}{base}) → "
                f"[`{summary.name(head, known)}`]({commit_url}{head}){which} | "
                f"{measurements(case)} | "
                f"{case['threshold']:.1%} | {per_call(case)} | "
                f"{standing(case, step.get('versions'))} |"
            )
    lines = [
        MARKER,
        f"The history's paired comparisons flag **{len(rows)} "
        f"regression{'s' if len(rows) != 1 else ''}** on main: a newly measured commit against the "
        f"previous one, timed in turn on one core; a flag needs the whole {stats.CONFIDENCE:.0%} "
        f"interval beyond the case's threshold; {stats.CONFIRMED_RULE} (`cuda-bench steps "
        "--recheck`), and is then not listed. Updated by the nightly benchmark run.",
        "",
    ]
    if other["since release"]:
        newest = sorted(
            {
                s["base"]
                for steps in steps_by_machine.values()
                for s in steps
                if summary.step_kind(s, known) == "since release"
            }
        )
        names = ", ".join(summary.name(c, known) for c in newest)
        lines += [
            f"Not counted here: {other['since release']} "
            f"case{'s' if other['since release'] != 1 else ''} slower at main's head than at the "
            f"newest release ({names}), on the dashboard's front page.",
            "",
        ]
    if other["release"]:
        lines += [
            f"Not counted here: {other['release']} "
            f"regression{'s' if other['release'] != 1 else ''} between cuda-core releases (the "
            "release ladder's paired steps), on the dashboard's Releases page.",
            "",
        ]
    if rows:
        lines += [
            f"| machine | case | commits | ratio [{stats.CONFIDENCE:.0%} interval], each "
            f"measurement | threshold | {PER_CALL} | standing |",
            "|---|---|---|--:|--:|--:|---|",
            *rows,
        ]
    return "\n".join(lines) + "\n", len(rows)
