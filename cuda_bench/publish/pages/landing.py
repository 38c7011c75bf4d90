"""``index.html``, the front page: per machine, main's head, its paired verdicts against the
previous measured commit and against the newest release, the regressions still open, and each
operation at the head: one number per cell (asv's median), a badge where the paired step to the head
flagged the case, the rest on hover."""

from __future__ import annotations

from cuda_bench.foundations import calls
from cuda_bench.foundations.names import is_cold_start, short_name
from cuda_bench.foundations.stats import CONFIDENCE
from cuda_bench.foundations.text import (
    TARGET_NS,
    asv_word,
    date_text,
    fmt,
    fmt_net,
    interval,
    number,
    signed,
    times,
    times_span,
)
from cuda_bench.publish import summary
from cuda_bench.publish.overview import APIS, COLD_APIS, LOOKUPS, TITLES
from cuda_bench.publish.pages.budget_table import budgets_html
from cuda_bench.publish.pages.glance import glance_html, machine_id
from cuda_bench.publish.pages.html import (
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
    step_build,
    unseen_html,
    verdict_badge,
    work_html,
)
from cuda_bench.publish.report import OLDER
from cuda_bench.results import overcpp_read

HOW_TO_READ = f"""<details class="how"><summary>How to read this page</summary>
<p>A <b>paired step</b> times two builds of cuda-python in turn on one core and gives each case \
a ratio (head over base) with a {CONFIDENCE:.0%} interval. A case is <b>slower</b> or \
<b>faster</b> only when its whole interval lies beyond the case's threshold (a percent or two: \
calibrated per case by an A/A run where one was made on the machine, else the default 2 %; each \
machine's part says which). {rule_html()}. <b>Main's head</b> is the newest commit of main \
measured on the machine. A paired chain multiplies the steps of one build only (the cuda-bindings \
both sides ran): where the build changes, it starts again.
Each cell of an operations table gives one time per call: the form's time in one process, timed \
beside its C++ twin and cuda.bindings' form (an over-C++ run), with its ratio over cuda.bindings' \
under it; where no such run timed the form, asv's median, marked asv (one unpaired run: context, \
it moves with the machine's state, up to 2×). A cell's hover says every other number of its case, \
each with the run it comes from. The rules and the evidence:
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
        build = step_build(told["step"])
        return (
            f'<tr data-against="{key}" data-base="{esc(told["base"])}" '
            f'data-head="{esc(told["head"])}" data-build="{esc(build)}">'
            f"<th>{heading}</th>"
            f"<td>{verdict_badge(told['counts'])}</td><td>{counts_text(told['counts'])} "
            f'<small class="text-muted">(paired {esc(told["step"]["date"][:10])}, '
            f"{esc(build)})</small></td></tr>"
        )
    return (
        f'<tr data-against="{key}" class="missing"><th>{heading}</th><td></td>'
        f"<td>{missing}</td></tr>"
    )


def render_landing(told, rows, known, thresholds="", budgets=None):
    """One machine's part of the front page: main's head, the verdicts (and the ``thresholds`` they
    were judged against, ``summary.thresholds_words``), the open regressions, each call against its
    budget (``budgets``: :class:`cuda_bench.results.budgets.Budgets`), each operation."""
    machine = told["machine"]
    params = told["params"]
    out = [
        f'<section class="machine" id="{machine_id(machine)}" data-machine="{esc(machine)}">'
        f"<h2>{esc(machine)} <small>"
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
    if rows:
        out.append(f"<h3>Each operation at {esc(head['name'])}</h3>")
        out.append(render(rows))
    out += budgets_html(rows, budgets, head["name"])
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
    said = (
        "The newest commit of main whose results could be read"
        if lost
        else "Main's head (the newest commit of main measured on this machine)"
    )
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
        elif part.get("step") and part["described"]["work"] is None:
            where = "the previous measured commit" if key == "previous" else "the newest release"
            out.append(
                f'<p class="work unseen-work" data-against="{key}">Work per call since {where}: '
                f"not compared, since {esc(part['described']['base_name'])} or "
                f"{esc(part['described']['head_name'])} was not counted on this machine "
                "(<code>cuda-bench counts</code> counts a commit).</p>"
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


def run_name(record):
    """How a cell's hover names an over-C++ run: 'the over-C++ run of 2026-12-04 14:28 UTC
    (cuda-bindings 13.3.1 wheel)'."""
    return (
        f"the over-C++ run of {record['date'][:16].replace('T', ' ')} UTC (cuda-bindings "
        f"{record['bindings']})"
    )


def cell_title(cell, row, usual):
    """What a cell says on hover, each number with the run it comes from: the time in one process,
    its ratio over cuda.bindings' and its cost over C++ (one over-C++ run); asv's median and its net
    of the floor (asv's run: unpaired, context); the paired step to the commit; the paired chain of
    the commit's build; the work per call."""
    lines = []
    one = cell.get("one_process")
    if one:
        lines.append(
            f"In {run_name(one['record'])}: {fmt(one['py_ns'] * 1e-9)} per call in one process"
            + (
                f"; {interval(one)} of cuda.bindings' time, paired in {one['processes']} "
                f"processes ({CONFIDENCE:.0%})"
                if "ratio" in one
                else ""
            )
            + (
                f"; over its C++ twin: {over_cpp_title(cell, usual)}"
                if cell.get("over_cpp")
                else ""
            )
        )
    elif "over_cpp_ns" in cell:
        lines.append(f"Over its C++ twin, from asv's run below: {over_cpp_title(cell, usual)}")
    if number(cell["value"]):
        net = (
            f", {fmt_net(cell['net'])} net of its harness floor ({fmt(row['floor'])})"
            if number(cell.get("net"))
            else ""
        )
        lines.append(
            f"asv's median in asv's run of {row['commit'][:9]} (cuda-bindings {row['build']}"
            f"{', ' + date_text(row['measured']) if row.get('measured') else ''}): "
            f"{fmt(cell['value'])} per call{net}: unpaired, context"
        )
    step = cell.get("step")
    if step:
        said = {"regression": "slower", "improvement": "faster"}.get(
            step["verdict"], step["verdict"]
        )
        build = f", {step['build']}" if step.get("build") else ""
        lines.append(
            f"Paired step {step['base'][:9]} → {row['commit'][:9]}{build}: {interval(step)} "
            f"({CONFIDENCE:.0%}), {said}"
            + (f"; {step['standing']}" if step.get("standing") else "")
        )
    if cell.get("index"):
        lines.append(chain_title(cell["index"]))
    if cell.get("work"):
        lines.append(f"Work per call, counted at {row['commit'][:9]}: {cell['work']}")
    return "\n".join(lines)


def chain_title(chain):
    """Where the commit stands on the case's paired chain of its build
    (``overview.chain_at``), and where and why that chain starts."""
    steps = f"{chain['steps']} step{'s' if chain['steps'] != 1 else ''}"
    said = (
        f"Paired chain (every step's builds: cuda-bindings {chain['build']}): {interval(chain)} "
        f"since {chain['since'][:9]} ({steps})"
    )
    if chain.get("before"):
        said += (
            f"; it starts at {chain['since'][:9]}, where the builds change from cuda-bindings "
            f"{chain['before']}: a chain never crosses builds"
        )
    return said


def over_cpp_title(cell, usual):
    """A cell's form over its C++ twin, in its hover: the difference and ratio, paired in one
    process, and how far the ratio moved over the commit's runs."""
    over = cell.get("over_cpp")
    of = cell.get("over_cpp_of", "raw")
    text = f"{overcpp_read.over_text(cell, usual)} ({of})"
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
                f"; {times_span(runs['low'], runs['high'])} over {runs['runs']} over-C++ runs of "
                f"this commit (the records name {runs['starts']} machine starts)"
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
                "their fastest recorded run on this machine: probably no process in the fast "
                "state, so the ratio reads high)"
            )
    return (
        text
        + f"; ✓ under cuda-python's target of {fmt(TARGET_NS * 1e-9)} over C++ (#1580), ✗ above"
    )


def order_differs(row, api):
    """Where cell ``api``'s form and cuda.bindings' are ordered one way in one process (the whole
    interval of their paired ratio on one side of 1) and the other way by asv's medians: the words
    the cell says it in, else ""."""
    cell, reference = row["cells"].get(api) or {}, row["cells"].get(overcpp_read.REFERENCE) or {}
    one = cell.get("one_process") or {}
    if "ratio" not in one or not (number(cell.get("value")) and number(reference.get("value"))):
        return ""
    faster_here = one["high"] < 1
    slower_here = one["low"] > 1
    faster_asv = cell["value"] < reference["value"]
    if (faster_here and not faster_asv) or (slower_here and faster_asv):
        return (
            f"asv's medians order {TITLES[api]} and cuda.bindings the other way: "
            f"{fmt(cell['value'])} against {fmt(reference['value'])} (unpaired, context)"
        )
    return ""


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
    runs = {
        (c["one_process"]["record"]["date"], c["one_process"]["record"]["bindings"])
        for r in rows
        for c in r["cells"].values()
        if c.get("one_process")
    }
    out = []
    others = sorted({bindings for _, bindings in runs if bindings != first["build"]})
    apart = (
        f" <b>Another build than asv's medians</b> (cuda-bindings {esc(first['build'])}): the "
        "two need not agree."
        if others
        else ""
    )
    if runs:
        named = "; ".join(
            f"{esc(date[:16].replace('T', ' '))} UTC, "
            f'<span class="build">cuda-bindings {esc(bindings)}</span>'
            for date, bindings in sorted(runs)
        )
        out.append(
            '<p class="legend-line one-process">Each cell gives one time per call, in one '
            "process: timed beside its C++ twin and the other forms in the same worker processes "
            f"(the over-C++ run{'s' if len(runs) > 1 else ''} of {esc(first['commit'][:9])}: "
            f"{named}); under cuda.core and CuPy, their time over cuda.bindings', paired process "
            f"by process, with its {CONFIDENCE:.0%} interval; ⇅ where asv's medians order the "
            f"two the other way.{apart}</p>"
        )
    out.append(
        '<p class="legend-line">Where no over-C++ run timed a form: <span class="asv">asv</span> '
        "and asv's median per call, one unpaired run (context: it moves with the machine's "
        f'state), cuda-bindings <span class="build">{esc(first["build"])}</span>. Harness '
        f'floor <span class="floor">{fmt(floor) if number(floor) else "not measured"}</span>. '
        '<span class="label label-danger">slower</span> <span class="label label-success">'
        "faster</span>: the paired step to this commit says so. Hover a number for every other "
        "number of its case, its cost over C++ among them, each with its run; click it for its "
        "graph.</p>"
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
    """One cell of the operations table, one time in it: the form's time in one process, its ratio
    over cuda.bindings' under it (one over-C++ run of the commit), and where asv's medians order
    the two the other way, a mark that says so; where no over-C++ run timed the form, asv's median,
    marked as asv's. A link to its graph, the paired step's badge; every number on hover, with its
    run (:func:`cell_title`)."""
    cell = row["cells"].get(api)
    if cell is None:
        return "<td></td>"
    value = cell["value"]
    link = graph_href(machine, row["benchmark"], row["case"])
    one = cell.get("one_process")
    if one:
        differs = order_differs(row, api)
        shown = (
            f'<a href="{esc(link)}">{fmt(one["py_ns"] * 1e-9)}</a>'
            + (f'<br><small class="vs-bindings">{interval(one)}</small>' if "ratio" in one else "")
            + (
                f'<br><small class="order-differs" title="{esc(differs)}">⇅ asv: other order'
                "</small>"
                if differs
                else ""
            )
            + ('<br><small class="asv">asv unreadable</small>' if cell.get("unreadable") else "")
        )
    elif number(value):
        shown = f'<a href="{esc(link)}"><span class="asv">asv</span> {fmt(value)}</a>'
    else:  # nothing measured, nothing to graph
        shown = asv_word(cell)
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
    data_one = f' data-one-process="{one["py_ns"]!r}"' if one else ""
    data_one += f' data-name="{esc(cell["case"])}"' if cell.get("case") else ""
    target = ""
    if "over_cpp_ns" in cell:
        target = " over-ok" if cell["over_cpp_ns"] < TARGET_NS else " over-target"
    return (
        f'<td class="{api}{target}" data-value="{repr(value) if number(value) else ""}"'
        f'{data_net}{data_one} data-verdict="{verdict}" '
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
    return page(
        "cuda-python: is main fine?",
        glance_html(found) + HOW_TO_READ + body,
        "index.html",
        banner(found),
    )
