"""``releases.html``: each cuda-core release against the one before it, paired, and the newest
release against main's head (or that the history lacks that step)."""

from __future__ import annotations

from cuda_bench.foundations.stats import CONFIDENCE
from cuda_bench.foundations.text import (
    cleared_text,
    interval,
    times,
)
from cuda_bench.publish import summary
from cuda_bench.publish.overview import TITLES
from cuda_bench.publish.pages.html import (
    METHOD,
    banner,
    case_html,
    changed_table,
    commit_link,
    counts_text,
    damaged_html,
    esc,
    one_side_html,
    page,
    rule_html,
    unseen_html,
    verdict_badge,
    work_html,
)


def geomean_text(found):
    parts = []
    for api in ("core", "bindings", "cupy", "cpp"):
        if api in found:
            value, n = found[api]
            parts.append(
                f'<span class="gm gm-{api}" data-api="{api}" data-value="{value!r}" '
                f'data-cases="{n}">{TITLES[api]} {times(value)} <small>({n})</small></span>'
            )
    return " · ".join(parts)


def render_release_step(machine, told, known, damaged=()):
    """One step of the ladder (or the newest release to main's head): its counts, geometric means,
    changed cases, the cases put down to a cuda-bindings change, the work per call; above them,
    which record of it could not be read (``damaged``: ``read.Machine.damaged``)."""
    body = [
        f'<section class="release-step" data-base="{esc(told["base"])}" '
        f'data-head="{esc(told["head"])}" '
        f'data-kind="{esc(told["kind"])}"><h3>{commit_link(told["base"], known)} → '
        f"{commit_link(told['head'], known)} {verdict_badge(told['counts'])}</h3>",
        damaged_html(damaged, told["base"], told["head"]),
        environment_html(told),
        f"<p>{counts_text(told['counts'])}. Geometric mean of the ratios, per library (cases): "
        f'{geomean_text(told["geomean"])}. <small class="text-muted">Paired '
        f"{esc(told['step']['date'][:10])}, each side with cuda-bindings "
        f"{esc(bindings_words(told['step']))}.</small></p>",
        across_html(told),
        one_side_html(machine, told["step"]),
        changed_table(machine, told["changed"]),
        put_down_html(machine, told),
        work_html(told),
    ]
    if told["not_reproduced"]:
        body.append(
            '<p class="text-muted not-reproduced">Not reproduced: '
            + ", ".join(
                f'<span data-case="{esc(c["name"])}">'
                f"{case_html(machine, c['name'])} flagged {interval(c)}, "
                f"{esc(cleared_text(c))}</span>"
                for c in told["not_reproduced"]
            )
            + "</p>"
        )
    body.append("</section>")
    return "\n".join(body)


def bindings_words(step):
    """Which cuda-bindings each side of a step ran: "13.3.1", "12.9.10 → 13.3.1", "built from each
    commit"."""
    versions = step.get("versions") or {}
    base, head = ((versions.get(side) or {}).get("cuda-bindings") for side in ("base", "head"))
    if step.get("bindings") == "source":
        return "built from each commit" + (
            f" ({base} → {head})" if base and head and base != head else ""
        )
    if base and head:
        return base if base == head else f"{base} → {head}"
    return step.get("bindings", "")


def environment_html(told):
    """The headline of a step whose environment changed between its sides
    (``history.environment_change``)."""
    if not told.get("environment"):
        return ""
    words = ", ".join(
        f"{package} {base} → {head}" for package, (base, head) in told["environment"].items()
    )
    return (
        '<p class="environment alert alert-warning"><b>The environment changed too: '
        f"{esc(words)}.</b> Each side ran the wheels named here, not built from these commits: the "
        "cuda.bindings rows are put down to that change, listed apart and not counted as this "
        "step's; the other libraries' rows may carry some of it too.</p>"
    )


def across_html(told):
    """Beside a release step with one cuda-bindings on both sides: the same commits paired across
    the cuda-bindings change, each with the wheel its release pinned (context; the verdicts are the
    step's own)."""
    other = told.get("across")
    if not other:
        return ""
    return (
        f'<p class="across">Across {esc(summary.environment_words(other["step"]))} (each release '
        f"with the wheel it pinned) the same commits read {counts_text(other['counts'])}. The "
        f"verdicts here are of cuda-bindings {esc(bindings_words(told['step']))} on both sides: "
        "the release's own change.</p>"
    )


def put_down_html(machine, told):
    changed = [c for c in told.get("put_down") or [] if c["verdict"] in summary.CHANGES]
    if not changed:
        return ""
    return (
        f'<h4 class="put-down">Changed with {esc(summary.environment_words(told["step"]))}</h4>'
        + changed_table(machine, changed, kind="put-down")
    )


def render_releases(machine, found, known, damaged=()):
    out = [f'<section class="machine" data-machine="{esc(machine)}"><h2>{esc(machine)}</h2>']
    newest, head = found["newest"], found["head"]
    if newest and head:
        if found["to_head"]:
            out.append(render_release_step(machine, found["to_head"], known, damaged))
        else:
            out.append(
                f'<section class="release-step missing" data-base="{esc(newest)}" '
                f'data-head="{esc(head)}"><h3>{commit_link(newest, known)} → main\'s head '
                f"{commit_link(head, known)}</h3><p><b>Not measured yet</b>: the history has no "
                f"paired step from {esc(summary.name(newest, known))} to main's head. "
                "<code>cuda-bench ladder</code> on a GPU machine measures every release, then "
                "main's head, and pairs each with the one before it.</p></section>"
            )
    if not found["ladder"]:
        out.append("<p>No release measured against the one before it on this machine.</p>")
    out += [render_release_step(machine, told, known, damaged) for told in found["ladder"]]
    told = [*found["ladder"], *([found["to_head"]] if found["to_head"] else [])]
    out.append(unseen_html(any(t.get("work") is not None for t in told)))
    out.append("</section>")
    return "\n".join(out)


RELEASES = f"""<p>Each cuda-core release against the one before it, newest first: both built on \
this machine,
each with the cuda-bindings it supports, timed in turn on one core. The cases that changed are \
listed slower
first, each with its ratio (newer over older) and {CONFIDENCE:.0%} interval; the geometric mean of \
every case's
ratio per library sums a step up. {rule_html()}
(<a href="{METHOD}">how the engine decides</a>).</p>"""


def document(found):
    """``releases.html`` of ``found`` (``read.History``)."""
    body = "\n".join(
        render_releases(name, machine.releases, found.known, machine.damaged)
        for name, machine in found.machines.items()
    )
    return page(
        "cuda-core releases, each against the one before",
        RELEASES + body,
        "releases.html",
        banner(found),
    )
