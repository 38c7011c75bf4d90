"""``steps.html``: every paired step of the history, newest first, and the measured commits not yet
paired."""

from __future__ import annotations

from cuda_bench.foundations.stats import CONFIDENCE
from cuda_bench.foundations.text import (
    PER_CALL,
    cleared_text,
    interval,
    last_line,
    measurements,
    per_call,
    standing,
)
from cuda_bench.publish import summary
from cuda_bench.publish.pages.html import (
    METHOD,
    banner,
    code_html,
    commit_link,
    esc,
    one_side_html,
    page,
    step_build,
)
from cuda_bench.results import history, instructions_read


def gaps_html(machine, gaps, known):
    """The pairs of measured commits the history has no step between (``history.missing_steps``),
    each with the command that makes it: where a case's chain starts again."""
    if not gaps:
        return ""
    items = "".join(
        f'<li class="gap" data-base="{esc(base)}" '
        f'data-head="{esc(head)}">{commit_link(base, known)} → {commit_link(head, known)} <small '
        f'class="text-muted">(cuda-bindings {esc(bindings)})</small></li>'
        for bindings, base, head in gaps
    )
    many = len(gaps) != 1
    return (
        f'<div class="gaps alert alert-warning" data-machine="{esc(machine)}"><b>{len(gaps)} '
        f"measured commit{'s' if many else ''} not yet paired with the one before:</b> each chain "
        "starts again there. <code>cuda-bench steps</code> on a GPU machine measures "
        f"{'them' if many else 'it'} (<code>cuda-bench plan</code> lists what the history "
        f"lacks).<ul>{items}</ul></div>"
    )


def render_steps(steps_by_machine, known=None, work=None, gaps=None, instructions=None):
    """The Steps page: each machine's paired steps, newest first, with the cases each judged and,
    where both commits were counted (``work``: {machine: {commit: counts record}}), the cases whose
    work per call changed, and (``instructions``: {machine: {commit: instruction records}}) each
    flagged case's instructions per call and each case whose count moved; the measured commits not
    yet paired (``gaps``: {machine: [(bindings, base, head)]}) first."""
    known, work, gaps = known or {}, work or {}, gaps or {}
    instructions = instructions or {}
    out = []
    for machine, steps in steps_by_machine.items():
        if not steps and not gaps.get(machine):
            continue
        said = False
        out.append(f"<h2>{esc(machine)}</h2>")
        out.append(gaps_html(machine, gaps.get(machine), known))
        out.append(
            '<table class="table table-condensed steps" data-machine="'
            + esc(machine)
            + '"><thead><tr>'
            "<th>base → head</th><th>date</th>"
            + "".join(f"<th>{esc(w)}</th>" for _, w in STEP_COUNTS)
            + "<th>pairs</th><th>seconds</th></tr></thead><tbody>"
        )
        kinds = {(s["base"], s["head"]): summary.step_kind(s, known) for s in steps}
        main = [step for step in steps if kinds[(step["base"], step["head"])] != "release"]
        ladder = [step for step in steps if kinds[(step["base"], step["head"])] == "release"]
        for group, title in (
            (main, "main's history" if ladder else ""),
            (ladder, "between cuda-core releases"),
        ):
            if group and title:
                out.append(f'<tr class="group"><th {ALL}>{esc(title)}</th></tr>')
            for step in newest_first(group, known):
                found = instructions_read.step_compared(step, instructions.get(machine))
                out += step_rows(machine, step, known, work, found)
                said = said or bool(found)
        out.append("</tbody></table>")
        if said:
            out.append(f'<p class="instructions"><small>{esc(instructions_read.WHAT)}</small></p>')
    return (
        "\n".join(out)
        or "<p>No paired steps yet: <code>cuda-bench run</code> records one for every newly "
        "measured commit that has a measured predecessor on the same machine.</p>"
    )


def step_rows(machine, step, known, work, instructions=None):
    """The Steps page's rows of one step: its counts, then each case that changed, was not
    measured, changed its work per call or its instructions per call (``instructions``:
    ``instructions_read.step_compared``), or lost process pairs."""
    out = []
    counted = summary.counted(step)
    count = {
        v: [c for c in counted if c["verdict"] == v]
        for v in ("regression", "improvement", "not reproduced")
    }
    found = summary.counts(step)
    rechecked = "".join(
        f"<br><small>measured again {esc((r.get('date') or '')[:16])}</small>"
        for r in step.get("rechecks", [])
    )
    built = "; ".join(w for w in (build_words(step), summary.built_from_words(step)) if w)
    built = f'<br><small class="built-from">{esc(built)}</small>' if built else ""
    ends = f'data-base="{esc(step["base"])}" data-head="{esc(step["head"])}"'
    if history.identical(step):
        out.append(
            f'<tr class="identical" {ends}><td>{commit_link(step["base"], known)} '
            f"→ {commit_link(step['head'], known)}{built}</td><td>"
            f"{esc(step.get('date', '')[:16])}</td><td {WIDE}>identical builds: "
            "nothing to measure (both sides build the same wheels)</td></tr>"
        )
        return out
    out.append(
        f"<tr {ends}><td>{commit_link(step['base'], known)} → "
        f"{commit_link(step['head'], known)}{built}</td><td>"
        f"{esc(step.get('date', '')[:16])}{rechecked}</td>"
        + "".join(f'<td data-count="{key}">{found[key]}</td>' for key, _ in STEP_COUNTS)
        + f"<td>{esc(step.get('settings', {}).get('pairs', ''))}</td>"
        f"<td>{step.get('seconds', 0):.0f}</td></tr>"
    )
    if found["one side"]:
        out.append(
            f'<tr class="one-side"><td colspan="2"></td><td {WIDE}>'
            f"{one_side_html(machine, step)}</td></tr>"
        )
    if history.environment_change(step):
        changed = [c for c in summary.put_down(step) if c["verdict"] in summary.CHANGES]
        out.append(
            f'<tr class="warning environment"><td {ALL}>the environment changed too: '
            f"{esc(summary.environment_words(step))}; {len(changed)} cuda.bindings "
            f"case{'s' if len(changed) != 1 else ''} changed with it, not counted as "
            "this step's"
            + "".join(f"<br><code>{esc(c['name'])}</code> {esc(interval(c))}" for c in changed)
            + "</td></tr>"
        )
    out += case_rows(machine, step, count, work, instructions or {})
    return out


def case_rows(machine, step, count, work, instructions):
    """A step's rows of its cases: each slower, not reproduced or faster (``count``: the cases of
    each verdict) with its instructions per call where both commits were counted, each not
    measured, each whose work per call changed, each whose instructions per call moved without a
    flag, each measured from fewer process pairs."""
    out = []
    for verdict in ("regression", "not reproduced", "improvement"):
        for case in count[verdict]:
            kind = {"regression": "danger", "not reproduced": "warning"}.get(verdict, "success")
            said = f" ({standing(case, step.get('versions'))})" if verdict == "regression" else ""
            said += f" ({cleared_text(case)})" if verdict == "not reproduced" else ""
            word = {"regression": "slower", "improvement": "faster"}.get(verdict, verdict)
            text = (
                f"{word}{said}: {measurements(case)}, threshold "
                f"{case['threshold']:.1%}; {PER_CALL}: {per_call(case)}"
            )
            if case["name"] in instructions:
                text += "; " + instructions_read.beside_timing(
                    case["verdict"], instructions[case["name"]]
                )
            out.append(
                step_case_row(case["name"], f"{kind} case", f'data-verdict="{esc(verdict)}"', text)
            )
    for name, text in sorted((step.get("errors") or {}).items()):
        out.append(
            step_case_row(
                name,
                "active case",
                'data-verdict="not measured"',
                f"not measured: {last_line(text)}",
            )
        )
    changed = (summary.work_changed(step, work.get(machine)) or {}).get("changed", {})
    for name, text in changed.items():
        out.append(step_case_row(name, "case work", 'data-work="1"', f"work per call: {text}"))
    flagged = {c["name"] for cases in count.values() for c in cases}
    for name, entry in instructions.items():
        if entry["moved"] and name not in flagged:
            said = instructions_read.beside_timing("same", entry)
            out.append(step_case_row(name, "case instructions", 'data-instructions="1"', said))
    for name, text in sorted((step.get("lost") or {}).items()):
        out.append(
            step_case_row(
                name,
                "info case",
                'data-lost="1"',
                f"measured from fewer process pairs: {text}",
            )
        )
    return out


STEP_COUNTS = summary.COUNT_WORDS  # the Steps page's count columns


STEP_COLUMNS = 2 + len(STEP_COUNTS) + 2  # base → head, date; the counts; pairs, seconds


ALL, WIDE = f'colspan="{STEP_COLUMNS}"', f'colspan="{STEP_COLUMNS - 2}"'


def step_case_row(name, kind, data, text):
    """A row of the Steps page about one case: its ``kind`` (classes) and ``data`` attributes, the
    case by its name and what it uses (:func:`code_html`), and ``text`` (escaped here)."""
    return (
        f'<tr class="{kind}" data-case="{esc(name)}" {data}><td colspan="2">{code_html(name)}'
        f"</td><td {WIDE}>{esc(text)}</td></tr>"
    )


def build_words(step):
    """Which build a step paired, as its row says it (:func:`step_build`); across builds, that no
    paired chain multiplies it."""
    said = step_build(step)
    return (
        said if history.family(step) else f"{said}: across builds, so no paired chain multiplies it"
    )


def newest_first(steps, known):
    """Steps by their head's place in the history, newest first; where commits.json does not place
    them, the step made last first."""

    def key(found):
        i, step = found
        return (*summary.place(step["head"], known)[:2], i)

    return [step for _, step in sorted(enumerate(steps), key=key, reverse=True)]


STEPS = f"""<p>Every paired step of the history, newest first: a newly measured commit against the \
previous measured
one on the same machine (then the release ladder's steps, each release against the one before). \
Both builds run
in turn on one core, process pair after process pair; a case's ratio is the median over the pairs, \
with a
{CONFIDENCE:.0%} interval. <b>Slower</b> or <b>faster</b> needs the whole interval beyond the \
case's threshold.
Each measurement of a flag is listed with the machine start (boot) it ran on. The C++ twins and \
the harness
floor do not run cuda-python code and never count (<a href="{METHOD}">the method</a>).</p>"""


def document(found):
    """``steps.html`` of ``found`` (``read.History``)."""
    gaps = {name: machine.gaps for name, machine in found.machines.items()}
    return page(
        "Paired steps",
        STEPS + render_steps(found.steps, found.known, found.work, gaps, found.instructions),
        "steps.html",
        banner(found),
    )
