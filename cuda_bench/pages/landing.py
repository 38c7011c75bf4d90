"""``index.html``, the front page: per machine, main's head, its paired verdicts against the
previous measured commit and against the newest release, the regressions still open, and each
operation at the head: one number per cell (asv's median), a badge where the paired step to the head
flagged the case, the rest on hover."""

from __future__ import annotations

from cuda_bench import calls, overcpp_read, summary
from cuda_bench.names import is_cold_start, short_name
from cuda_bench.overview import APIS, COLD_APIS, LOOKUPS, TITLES
from cuda_bench.pages.budget_table import budgets_html
from cuda_bench.pages.html import (
    METHOD,
    banner,
    calls_html,
    case_html,
    changed_table,
    commit_link,
    counts_text,
    esc,
    graph_href,
    page,
    rule_html,
    unseen_html,
    verdict_badge,
    work_html,
)
from cuda_bench.report import OLDER
from cuda_bench.stats import CONFIDENCE
from cuda_bench.text import (
    TARGET_NS,
    date_text,
    fmt,
    fmt_net,
    interval,
    number,
    signed,
    times,
    times_span,
)

HOW_TO_READ = f"""<details class="how"><summary>How to read this page</summary>
<p>A <b>paired step</b> times two builds of cuda-python in turn on one core and gives each case \
a ratio (head over
base) with a {CONFIDENCE:.0%} interval. A case is <b>slower</b> or <b>faster</b> \
only when its whole interval lies
beyond the case's threshold (a percent or two: calibrated per case by an A/A run where one was \
made on the
machine, else the default 2 %; each machine's part says which). {rule_html()}.
The table's numbers are asv's medians per call at main's head: context, since they move with the
machine's state (up to 2× on the H200), never a change; a cell's hover says every other number of
its case. The rules and the evidence:
<a href="{METHOD}">docs/method.md</a>.</p></details>"""


COLD_TITLE = (
    "Cold start <small>(a fresh interpreter's import, the driver's load, the first context: each "
    "net of the same interpreter's <code>python -c pass</code>; asv's medians, the paired step's "
    "badge)</small>"
)


def verdict_row(key, heading, part, missing):
    """One row of the landing page's verdicts: a paired step's counts and changed cases, or why
    there is none."""
    if part and part.get("step"):
        told = part["described"]
        return (
            f'<tr data-against="{key}" data-base="{esc(told["base"])}" '
            f'data-head="{esc(told["head"])}">'
            f"<th>{heading}</th>"
            f"<td>{verdict_badge(told['counts'])}</td><td>{counts_text(told['counts'])} "
            f'<small class="text-muted">(paired {esc(told["step"]["date"][:10])})</small></td></tr>'
        )
    return (
        f'<tr data-against="{key}" class="missing"><th>{heading}</th><td></td>'
        f"<td>{missing}</td></tr>"
    )


def render_landing(told, rows, known, thresholds="", budgets=None):
    """One machine's part of the front page: main's head, the verdicts (and the ``thresholds`` they
    were judged against, ``summary.thresholds_words``), the open regressions, each call against its
    budget (``budgets``: :class:`cuda_bench.budgets.Budgets`), each operation."""
    machine = told["machine"]
    params = told["params"]
    out = [
        f'<section class="machine" data-machine="{esc(machine)}"><h2>{esc(machine)} <small>'
        f"{esc(params.get('gpu', 'no GPU'))}, driver {esc(params.get('driver', '-'))}</small></h2>"
    ]
    head = told["head"]
    out += head_html(told, known)
    if head is None:
        return "\n".join(out)
    out += verdicts_html(told, known)
    if thresholds:
        out.append(f'<p class="thresholds text-muted">Thresholds: {esc(thresholds)}.</p>')
    out += changes_html(told, known)
    out += budgets_html(rows, budgets, head["name"])
    if rows:
        out.append(f"<h3>Each operation at {esc(head['name'])}</h3>")
        out.append(render(rows))
    out.append("</section>")
    return "\n".join(out)


def head_html(told, known):
    """Which commit of main the machine's part is about (and which it could not read)."""
    out = []
    head, lost = told["head"], told.get("lost_head")
    if lost:
        title = f" “{esc(lost['title'])}”" if lost["title"] else ""
        out.append(
            f'<p class="lost-head" data-commit="{esc(lost["commit"])}">Main\'s head: '
            f"{commit_link(lost['commit'], known)}{title}: <b>its results file could not be "
            "read</b> "
            f"(<code>{esc(lost['file'])}</code>"
            f"{' line ' + str(lost['line']) if lost['line'] else ''}: "
            f"{esc(lost['why'])}). Nothing below is of it.</p>"
        )
    if head is None:
        out.append("<p>No commit of main measured on this machine yet.</p></section>")
        return out
    title = f" “{esc(head['title'])}”" if head["title"] else ""
    said = "The newest commit of main whose results could be read" if lost else "Main's head"
    out.append(
        f'<p class="head" data-commit="{esc(head["commit"])}">{said}: '
        f"{commit_link(head['commit'], known)}"
        f"{title}, committed {date_text(head['date'])[:10]}; asv measured it "
        f"{date_text(head['measured'])}.</p>"
    )
    return out


def verdicts_html(told, known):
    """Main's head against the previous measured commit and the newest release, and the open
    regressions: a table."""
    head = told["head"]
    out = ['<table class="table verdicts"><tbody>']
    previous = told["previous"] or {}
    prev_name = (
        f"{commit_link(previous['commit'], known)} (the previous measured commit)"
        if previous.get("commit")
        else "the previous measured commit"
    )
    out.append(
        verdict_row(
            "previous",
            f"against {prev_name}",
            previous,
            "no paired step to main's head yet: <code>cuda-bench steps</code> makes it"
            if previous.get("commit")
            else "main's first measured commit: nothing to pair it with",
        )
    )
    release = told["release"]
    if release:
        out.append(
            verdict_row(
                "release",
                f"against {commit_link(release['commit'], known)} (the newest release)",
                release,
                "<b>not measured yet</b>: the history has no paired step from "
                f"{esc(release['name'])} to "
                f"{esc(head['name'])}. <code>cuda-bench ladder</code> on a GPU machine measures "
                "every release, then "
                "main's head, and pairs each with the one before it.",
            )
        )
    opened = told["open"]
    confirmed = sum(bool(c.get("confirmed")) for _, c in opened)
    text = (
        f"{confirmed} confirmed · {len(opened) - confirmed} not yet confirmed" if opened else "none"
    )
    ladder = (
        (
            f' <small class="text-muted">(and {told["release_open"]} between releases: '
            '<a href="releases.html">Releases</a>)</small>'
        )
        if told["release_open"]
        else ""
    )
    badge = (
        '<span class="label label-danger">open</span>'
        if opened
        else '<span class="label label-default">none</span>'
    )
    out.append(
        f'<tr data-against="open"><th>regressions still open on main</th><td>{badge}</td>'
        f'<td><a href="regressions.html">{text}</a>{ladder}</td></tr>'
    )
    out.append("</tbody></table>")
    return out


def changes_html(told, known):
    """What changed since the previous measured commit and the newest release, their work per
    call, and the open regressions on main, listed."""
    machine = told["machine"]
    opened = told["open"]
    out = []
    for key, heading in (
        ("previous", "Changed since the previous measured commit"),
        ("release", "Changed since the newest release"),
    ):
        part = told.get(key) or {}
        if part.get("step") and (
            part["described"]["changed"] or (part["described"]["work"] or {}).get("changed")
        ):
            out.append(
                f'<h3 class="changed" data-against="{key}">{heading}</h3>'
                + changed_table(machine, part["described"]["changed"])
                + work_html(part["described"])
            )
        elif part.get("step") and part["described"]["work"] is not None:
            where = (
                " since the previous measured commit"
                if key == "previous"
                else " since the newest release"
            )
            out.append(f'<div data-against="{key}">{work_html(part["described"], where)}</div>')
    out.append(
        unseen_html(
            any(
                (told.get(key) or {}).get("step") and told[key]["described"]["work"] is not None
                for key in ("previous", "release")
            )
        )
    )
    if opened:
        out.append(
            '<h3>Open regressions on main</h3><ul class="open">'
            + "".join(
                f'<li data-case="{esc(c["name"])}" data-head="{esc(s["head"])}">'
                f"{case_html(machine, c['name'])} {interval(c)} at "
                f"{commit_link(s['base'], known)} → "
                f"{commit_link(s['head'], known)}: {esc(summary.status(c))}</li>"
                for s, c in opened
            )
            + "</ul>"
        )
    return out


def cell_title(cell, row, usual):
    """What a cell says on hover: the median's place, net of the floor, the paired step, over
    C++."""
    lines = []
    one = cell.get("one_process")
    if one:
        lines.append(
            f"in one process (the over-C++ run of {one['record']['date'][:10]}, cuda-bindings "
            f"{one['record']['bindings']}): {fmt(one['py_ns'] * 1e-9)} per call"
            + (
                f"; {interval(one)} of cuda.bindings' time, paired in {one['processes']} "
                f"processes ({CONFIDENCE:.0%})"
                if "ratio" in one
                else ""
            )
        )
    if number(cell["value"]):
        lines.append(
            f"asv's median at {row['commit'][:9]}: {fmt(cell['value'])} per call (one unpaired "
            f"run: context; cuda-bindings {row['build']})"
        )
    if number(cell.get("net")):
        lines.append(f"net of the harness floor ({fmt(row['floor'])}): {fmt_net(cell['net'])}")
    step = cell.get("step")
    if step:
        said = {"regression": "slower", "improvement": "faster"}.get(
            step["verdict"], step["verdict"]
        )
        lines.append(
            f"paired with {step['base'][:9]}: {interval(step)} ({CONFIDENCE:.0%}), {said}"
            + (f"; {step['standing']}" if step.get("standing") else "")
        )
    if cell.get("index"):
        product, base, count = cell["index"]
        lines.append(
            f"paired chain {times(product)} since {base[:9]} ({count} "
            f"step{'s' if count != 1 else ''})"
        )
    if cell.get("work"):
        lines.append(f"work per call, counted: {cell['work']}")
    if "over_cpp_ns" in cell:
        lines.append(over_cpp_title(cell, row, usual))
    return "\n".join(lines)


def over_cpp_title(cell, row, usual):
    """What a cell's hover says of its form over its C++ twin: the ratio and difference, paired in
    one process, how far they moved over the commit's runs, and how they stand to asv's median."""
    over = cell.get("over_cpp")
    of = cell.get("over_cpp_of", "raw")
    text = f"over its C++ twin: {overcpp_read.over_text(cell, usual)} ({of})"
    if over:
        state = (
            f", over the {over['fast']} of {over['processes']} processes in the fast state"
            if over.get("fast") is not None
            else ""
        )
        text += (
            f"; paired in one process{state}: {times_span(over['low'], over['high'])}, "
            f"{signed(over['over_low'] * 1e-9)} to {signed(over['over_high'] * 1e-9)} "
            f"({CONFIDENCE:.0%})"
        )
        runs = over.get("runs")
        if runs and runs["runs"] > 1:
            text += (
                f"; {times_span(runs['low'], runs['high'])} over {runs['runs']} runs of this "
                "commit "
                f"(the records name {runs['starts']} machine starts)"
            )
        if runs and runs.get("left_out"):
            text += (
                f"; {runs['left_out']} run(s) in the slow state left out (their C++ twins ran "
                "more than "
                f"{times(overcpp_read.SLOW_STATE, 2)} slower than their fastest recorded run)"
            )
        if overcpp_read.slow_state(runs):
            text += (
                f" (⚠ its C++ twins ran {times(overcpp_read.slow_state(runs))} slower than "
                "their fastest recorded "
                "run on this machine: probably no process in the fast state, so the ratio "
                "reads high)"
            )
        if number(over.get("py_ns")) and over["py_ns"] > 0:
            apart = cell["value"] * 1e9 / over["py_ns"]
            python = fmt(over["py_ns"] * 1e-9)
            build = (cell.get("one_process") or {}).get("record", {}).get("bindings")
            other = (
                f"another build (cuda-bindings {build}, asv's: {row['build']}) and another run"
                if build and build != row["build"]
                else "another run, in another state of the machine"
            )
            text += (
                f". Measured apart from asv's median above: that is {times(apart, 2)} this "
                f"measurement's Python time per call ({python}); {other}"
            )
        else:
            text += (
                ". Measured apart from the median above, in the fast state: the two need not agree"
            )
    return (
        text
        + f"; ✓ under cuda-python's target of {fmt(TARGET_NS * 1e-9)} over C++ (#1580), ✗ above"
    )


def render(rows):
    """The operations table of each machine in ``rows`` (``overview.overview_rows``): per library,
    its time per call in one process beside its C++ twin and the other forms, each form paired
    with cuda.bindings' in the same processes (ratio and interval), where an over-C++ run of the
    commit timed it; asv's median (one unpaired run, context) below it, or alone where no such run
    did; a badge where the paired step to the commit flagged the case; the rest on hover, a click
    opens the case's graph. cuda.pathfinder's lookups (no GPU, no twin) in a table of their own.
    ★ marks an operation whose sides do different work, said once below."""
    out = []
    for machine in dict.fromkeys(r["machine"] for r in rows):
        mrows = [r for r in rows if r["machine"] == machine]
        first = mrows[0]
        usual = overcpp_read.usual_runs(mrows)
        out += legend_html(mrows)
        reasons = {}
        cold = [r for r in mrows if is_cold_start(r["benchmark"])]
        lookups = [r for r in mrows if LOOKUPS in r["cells"]]
        lookups = [r for r in lookups if r not in cold]
        calls_ = [r for r in mrows if r not in lookups and r not in cold]
        out.append(table_html(machine, calls_, APIS, usual, reasons))
        if lookups:
            out.append(
                f"<h4>{TITLES[LOOKUPS]}'s lookups <small>(no GPU; asv's medians)</small></h4>"
            )
            out.append(table_html(machine, lookups, (LOOKUPS,), usual, reasons))
        if cold:
            out.append(f"<h4>{COLD_TITLE}</h4>")
            out.append(table_html(machine, cold, COLD_APIS, usual, reasons))
        if reasons:
            out.append(
                '<ul class="differs-notes">'
                + "".join(
                    f'<li><span class="differs">{mark}</span> the sides do different work: '
                    f"{esc(reason)}</li>"
                    for reason, mark in reasons.items()
                )
                + "</ul>"
            )
        if first.get("older"):
            out.append(f'<p class="older">{esc(OLDER.format(names=", ".join(first["older"])))}</p>')
    return "\n".join(out)


def legend_html(rows):
    """What the numbers of one machine's operations table are, and which build each ran."""
    first = rows[0]
    floor = first["floor"]
    runs = [
        c["one_process"]["record"]
        for r in rows
        for c in r["cells"].values()
        if c.get("one_process")
    ]
    out = []
    if runs:
        newest = max(runs, key=lambda run: run["date"])
        apart = (
            f" <b>Another build than asv's medians</b> (cuda-bindings {esc(first['build'])}): "
            "the two need not agree."
            if newest["bindings"] != first["build"]
            else ""
        )
        out.append(
            '<p class="legend-line one-process">In one process: each form\'s time per call, '
            "timed beside its C++ twin and the other forms in the same worker processes (the "
            f"over-C++ run of {esc(first['commit'][:9])}, {esc(newest['date'][:10])}, "
            f'<span class="build">cuda-bindings {esc(newest["bindings"])}</span>); under '
            "cuda.core and CuPy, their time over cuda.bindings', paired process by process, with "
            f"its {CONFIDENCE:.0%} interval.{apart}</p>"
        )
    out.append(
        '<p class="legend-line"><span class="asv">asv</span>: asv\'s median per call, one '
        "unpaired run (context: it moves with the machine's state), cuda-bindings "
        f'<span class="build">{esc(first["build"])}</span>; a number alone is asv\'s. Harness '
        f'floor <span class="floor">{fmt(floor) if number(floor) else "n/a"}</span>. <span '
        'class="label label-danger">slower</span> <span class="label label-success">faster'
        "</span>: the paired step to this commit says so. Hover a number for its interval and "
        "its cost over C++; click it for its graph.</p>"
    )
    return out


def table_html(machine, rows, apis, usual, reasons):
    """One operations table: a row per operation case, a column per library of ``apis``;
    ``reasons`` ({why the sides differ: its mark}) gains the ★ of its rows."""
    out = [
        '<table class="table table-condensed table-hover overview" '
        f'data-machine="{esc(machine)}">'
        "<thead><tr><th>operation</th>"
        + "".join(f"<th>{TITLES[a]}</th>" for a in apis)
        + "</tr></thead><tbody>"
    ]
    for row in rows:
        star = ""
        if row.get("differs"):
            mark = reasons.setdefault(
                row["differs"], "★" if not reasons else f"★{len(reasons) + 1}"
            )
            star = f' <span class="differs" title="{esc(row["differs"])}">{mark}</span>'
        case = " ".join(row["case"])
        named = [
            row["cells"][api]["case"] for api in apis if (row["cells"].get(api) or {}).get("case")
        ]
        uses = [n for name in named for n in calls.of(name)]
        out.append(
            f'<tr data-benchmark="{esc(row["benchmark"])}" data-case="{esc(case)}"><td>'
            f"{esc(short_name(row['benchmark']))}{' ' + esc(case) if case else ''}{star}"
            f"{'<br>' + calls_html(list(dict.fromkeys(uses))) if uses else ''}</td>"
        )
        out += [cell_html(row, api, machine, usual) for api in apis]
        out.append("</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def cell_html(row, api, machine, usual):
    """One cell of the operations table: the form's time in one process and its ratio over
    cuda.bindings' (where an over-C++ run timed it), asv's median (a link to its graph), the
    paired step's badge; the rest on hover."""
    cell = row["cells"].get(api)
    if cell is None:
        return "<td></td>"
    value = cell["value"]
    link = graph_href(machine, row["benchmark"], row["case"])
    one = cell.get("one_process")
    asv = fmt(value) if number(value) else ("failed" if value is None else "n/a")
    if one:
        shown = (
            f'<a href="{esc(link)}">{fmt(one["py_ns"] * 1e-9)}</a>'
            + (f'<br><small class="vs-bindings">{interval(one)}</small>' if "ratio" in one else "")
            + (f'<br><small class="asv">asv {asv}</small>' if number(value) else "")
        )
    else:
        shown = f'<a href="{esc(link)}">{asv}</a>'
    if not number(value) and not one:
        return f'<td class="{api}" data-value="">{shown}</td>'
    badge, verdict = "", ""
    step = cell.get("step")
    if step and step["verdict"] in summary.CHANGES:
        verdict = step["verdict"]
        kind, word = ("danger", "slower") if verdict == "regression" else ("success", "faster")
        badge = f' <span class="label label-{kind} badge-{verdict}">{word}</span>'
    net = cell.get("net")
    data_net = f' data-net="{net!r}"' if number(net) else ""
    target = ""
    if "over_cpp_ns" in cell:
        target = " over-ok" if cell["over_cpp_ns"] < TARGET_NS else " over-target"
    return (
        f'<td class="{api}{target}" data-value="{repr(value) if number(value) else ""}"{data_net} '
        f'data-verdict="{verdict}" '
        f'title="{esc(cell_title(cell, row, usual))}">{shown}{badge}</td>'
    )


def document(found):
    """``index.html`` of ``found`` (``read.History``)."""
    body = "\n".join(
        render_landing(
            machine.landing,
            [r for r in found.rows if r["machine"] == name],
            found.known,
            machine.thresholds,
            found.budgets,
        )
        for name, machine in found.machines.items()
    )
    return page("cuda-python: is main fine?", HOW_TO_READ + body, "index.html", banner(found))
