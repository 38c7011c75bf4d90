"""``regressions.html`` and its feed ``regressions.xml``: every flag with its ratio, interval,
status and the commits by name."""

from __future__ import annotations

from datetime import datetime, timezone
from urllib.parse import quote

from cuda_bench.compare import bisect
from cuda_bench.foundations.stats import CONFIDENCE
from cuda_bench.foundations.text import (
    PER_CALL,
    cleared_text,
    interval,
    measurements,
    per_call,
    standing,
)
from cuda_bench.publish import summary
from cuda_bench.publish.pages.html import (
    STATUS_CLASS,
    banner,
    case_html,
    commit_link,
    esc,
    page,
    per_call_html,
    rule_html,
)
from cuda_bench.results import history

KIND_WORDS = {"main": "main", "release": "between releases", "since release": "since a release"}


def render_regressions(machine, found, known, put_down=(), bisects=()):
    """One machine's flags: the open ones on main, since the newest release and between releases,
    then those another machine start did not reproduce; each with its ratio, interval, status and
    the commits by name, and, where the step spans several commits, the one a bisect found
    (``bisects``) or the command that finds it; last, the slowdowns put down to a cuda-bindings
    change (``put_down``: ``summary.put_down_flags``), which no status counts."""
    out = [f'<section class="machine" data-machine="{esc(machine)}"><h2>{esc(machine)}</h2>']
    groups = [
        ("open", "main", "Open on main"),
        ("open", "since release", "Open since the newest release"),
        ("open", "release", "Open between releases"),
        ("not reproduced", None, "Not reproduced"),
    ]
    for table, kind, title in groups:
        verdict = "regression" if table == "open" else "not reproduced"
        chosen = [(s, c, k) for s, c, k in found if c["verdict"] == verdict and kind in (None, k)]
        if not chosen and kind != "main":
            continue
        note = (
            " <small>another machine start measured it without a flag</small>"
            if table != "open"
            else ""
        )
        out.append(f"<h3>{title} <small>({len(chosen)})</small>{note}</h3>")
        if not chosen:
            out.append("<p>None.</p>")
            continue
        ratio = "flag's ratio" if table != "open" else "ratio"
        out.append(
            f'<table class="table table-condensed regressions" data-table="{table}"><thead><tr>'
            f"<th>case</th><th>where</th><th>{ratio} [{CONFIDENCE:.0%} interval]</th>"
            f"<th>status</th><th>threshold</th><th>{esc(PER_CALL)}</th><th>measured</th>"
            "</tr></thead><tbody>"
        )
        for step, case, kind_of in chosen:
            state = summary.status(case)
            note = standing(case, step.get("versions"))
            why = cleared_text(case) if case["verdict"] == "not reproduced" else note
            runs = case.get("measurements") or [case]
            starts = len({m.get("start") for m in runs})
            out.append(
                f'<tr class="case" {attributes(machine, step, case, kind_of)} '
                f'data-low="{case["low"]!r}" '
                f'data-high="{case["high"]!r}" data-status="{esc(state)}"><td>'
                f"{case_html(machine, case['name'])}</td><td>"
                f"{commit_link(step['base'], known)} → "
                f"{commit_link(step['head'], known)}"
                f"{bisect_html(step, case, known, bisects)}</td><td>{interval(case)}</td><td "
                f'class="text-{STATUS_CLASS[state]}"><b>{esc(state)}</b><br><small '
                f'class="why">{esc(why)}</small></td><td>{case["threshold"]:.1%}</td><td '
                f'class="per-call">{per_call_html(case)}</td><td '
                f'title="{esc(measurements(case))}">{len(runs)} '
                f"time{'s' if len(runs) != 1 else ''}, {starts} machine "
                f"start{'s' if starts != 1 else ''}</td></tr>"
            )
        out.append("</tbody></table>")
    out += put_down_html(machine, put_down, known)
    out.append("</section>")
    return "\n".join(out)


def bisect_html(step, case, known, bisects):
    """Under a flag's commits: the commit a bisect found made the case slower (with its ratio), or
    its other answer (``bisect.answered_text``); or, where the step spans several commits of main
    and no bisect answered, the command that finds the commit."""
    told = bisect.answered(step, case["name"], bisects)
    if told is None:
        command = bisect.command_for(step, case["name"], known)
        return (
            f'<br><small class="bisect">which commit: <code>{esc(command)}</code></small>'
            if command
            else ""
        )
    kind, what = told
    if kind == bisect.FOUND:
        said = ", ".join(f"{commit_link(c, known)} {esc(interval(found))}" for c, found in what)
        return f'<br><small class="bisect" data-found="{esc(what[0][0])}">bisected: {said}</small>'
    return f'<br><small class="bisect">{esc(bisect.answered_text(told))}</small>'


def put_down_html(machine, put_down, known):
    """The slowdowns of cuda.bindings cases across a cuda-bindings wheel change: the wheel's, not
    the commits' (each release step pairs the same commits with one cuda-bindings on both sides
    where it can: the Releases page)."""
    if not put_down:
        return []
    out = [
        f"<h3>Put down to a cuda-bindings change <small>({len(put_down)})</small> <small>each "
        "side ran another cuda-bindings wheel, so these cuda.bindings cases measure the wheels, "
        'not the commits: see <a href="releases.html">Releases</a></small></h3>',
        '<table class="table table-condensed regressions" data-table="put down"><thead><tr>'
        f"<th>case</th><th>where</th><th>ratio [{CONFIDENCE:.0%} interval]</th>"
        f"<th>put down to</th><th>{esc(PER_CALL)}</th></tr></thead><tbody>",
    ]
    for step, case, kind_of in put_down:
        out.append(
            f'<tr class="case put-down" {attributes(machine, step, case, kind_of)}><td>'
            f"{case_html(machine, case['name'])}</td><td>"
            f"{commit_link(step['base'], known)} → {commit_link(step['head'], known)}</td>"
            f"<td>{interval(case)}</td><td>{esc(history.attributed(step, case))}</td>"
            f'<td class="per-call">{esc(per_call(case))}</td></tr>'
        )
    out.append("</tbody></table>")
    return out


def attributes(machine, step, case, kind_of):
    """The attributes of one flag's row: its anchor, the case, the step's commits and kind, the
    ratio."""
    return (
        f'id="{esc(anchor(machine, step, case))}" '
        f'data-case="{esc(case["name"])}" data-base="{esc(step["base"])}" '
        f'data-head="{esc(step["head"])}" data-kind="{kind_of}" data-ratio="{case["ratio"]!r}"'
    )


def anchor(machine, step, case):
    return f"{machine}-{step['base'][:9]}-{step['head'][:9]}-{case['name']}"


REGRESSIONS = f"""<p>Every case a paired step flagged slower: the whole {CONFIDENCE:.0%} interval \
of its ratio (head
over base) lies above 1 + its threshold; those put down to a change of cuda-bindings wheel are \
listed last, apart. {rule_html()} (<code>cuda-bench steps --recheck</code>
measures a flag not yet confirmed again). Each status says why it stands so; a flag not reproduced
shows its own ratio and what cleared it. Cases the engine calls the same are never listed. Also as a
feed: <a href="regressions.xml">regressions.xml</a>.</p>"""


def write_feed(html_dir, project, found_by_machine, known):
    """regressions.xml: one Atom entry per open regression (confirmed or not yet), with its interval
    and status and the commits by name; nothing the engine calls the same or did not reproduce."""
    from asv import feed

    entries = []
    for machine, found in found_by_machine.items():
        for step, case, kind in found:
            if case["verdict"] != "regression":
                continue
            where = f"{summary.name(step['base'], known)} → {summary.name(step['head'], known)}"
            title = f"{interval(case)} {case['name']} at {where} ({summary.status(case)})"
            content = (
                f"<p>{esc(case['name'])} on {esc(machine)}: {interval(case)} ({CONFIDENCE:.0%} "
                f"interval), {esc(standing(case, step.get('versions')))}; {esc(KIND_WORDS[kind])}, "
                f"{esc(where)}; {esc(PER_CALL)}: {esc(per_call(case))}.</p>"
            )
            date = datetime.strptime(step["date"][:19], "%Y-%m-%dT%H:%M:%S").replace(
                tzinfo=timezone.utc
            )
            entries.append(
                feed.FeedEntry(
                    title,
                    date,
                    f"regressions.html#{quote(anchor(machine, step, case))}",
                    content,
                    [machine, case["name"], step["base"], step["head"]],
                    date,
                )
            )
    entries.sort(key=lambda e: e.updated, reverse=True)
    feed.write_atom(
        str(html_dir / "regressions.xml"),
        entries,
        title=f"{project} performance regressions",
        author="cuda-python-bench",
        address=f"{project}.cuda-python-bench",
    )


def document(found):
    """``regressions.html`` of ``found`` (``read.History``)."""
    body = "\n".join(
        render_regressions(
            name, machine.regressions, found.known, machine.put_down, machine.bisects
        )
        for name, machine in found.machines.items()
    )
    return page("Regressions", REGRESSIONS + body, "regressions.html", banner(found))
