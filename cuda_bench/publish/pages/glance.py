"""The front page's first screen: every machine side by side, a column each. Is main's head fine;
what is open, on main and between releases, and how sure (confirmed or not yet, the largest with
its interval); main's head against the previous measured commit and the newest release; the newest
release against the one before. Each machine's part below says the rest."""

from __future__ import annotations

from cuda_bench.foundations.text import interval
from cuda_bench.publish.pages.html import case_label, commit_link, counts_text, esc, verdict_badge
from cuda_bench.results import history


def machine_id(name):
    """The anchor of a machine's part of the front page."""
    return "machine-" + "".join(c if c.isalnum() else "-" for c in name)


def step_words(part, known):
    """A paired step's badge and counts, and the commit it starts from: what a cell says of it."""
    told = part["described"]
    family = history.family(told["step"]) or "across builds"
    return (
        f"{verdict_badge(told['counts'])} {counts_text(told['counts'])} "
        f"<small>(from {commit_link(told['base'], known)}; {esc(family)})</small>"
    )


def head_answer(told):
    """Is main's head fine: (badge class, word, why) from the step to it and what is open."""
    previous = (told["previous"] or {}).get("step")
    counted = (told["previous"] or {}).get("described", {}).get("counts", {})
    if previous is None:
        return "warning", "not paired yet", "no paired step to it yet: nothing is known"
    if counted.get("regression"):
        return "danger", "slower", f"{counted['regression']} slower than the previous commit"
    if told["open"]:
        return "danger", "regressions open", "main still carries the regressions below"
    return "success", "fine", "nothing slower than the previous commit, nothing open on main"


def open_words(flags, where):
    """The regressions open ``where`` (on main, between releases): how many, how sure, the
    largest with its interval; "none"."""
    if not flags:
        return '<span class="label label-default">none</span>'
    confirmed = sum(bool(c.get("confirmed")) for _, c in flags)
    step, largest = max(flags, key=lambda sc: sc[1]["ratio"])
    return (
        f'<a href="regressions.html"><b>{len(flags)} open</b></a> {where}: {confirmed} confirmed · '
        f"{len(flags) - confirmed} not yet confirmed; the largest "
        f"<code>{esc(case_label(largest['name']))}</code> {interval(largest)}"
    )


def release_words(told, head, known):
    """Main's head against the newest release measured on the machine."""
    release = told["release"]
    if release is None:
        return '<span class="text-muted">no release measured on this machine</span>'
    if release.get("step") is None:
        return (
            f"{commit_link(release['commit'], known)} → {esc(head['name'])}: <b>not measured "
            "yet</b> (<code>cuda-bench ladder</code>)"
        )
    return step_words(release, known)


def ladder_words(machine, known):
    """The newest release step of the machine's ladder: its two releases and its counts."""
    ladder = machine.releases["ladder"]
    if not ladder:
        return '<span class="text-muted">no release step on this machine</span>'
    newest = ladder[0]
    return (
        f"{commit_link(newest['base'], known)} → {commit_link(newest['head'], known)}: "
        f"{verdict_badge(newest['counts'])} {counts_text(newest['counts'])}"
    )


def glance_html(found):
    """The first screen of ``found`` (``read.History``): a table, a column per machine."""
    machines = [m for m in found.machines.values() if m.landing["head"]]
    if not machines:
        return ""
    known = found.known
    head = ['<table class="table glance"><thead><tr><th></th>']
    head += [
        f'<th data-machine="{esc(m.name)}"><a href="#{machine_id(m.name)}">{esc(m.name)}</a>'
        f"<br><small>{esc(m.params.get('gpu', 'no GPU'))}</small></th>"
        for m in machines
    ]
    rows = {
        "head": ("Main's head <small>(main's newest measured commit)</small>", []),
        "previous": ("against the previous measured commit", []),
        "open": ("open on main", []),
        "release": ("against the newest release", []),
        "release-open": ("open between releases", []),
        "release-step": ("the newest release against the one before", []),
    }
    for m in machines:
        told = m.landing
        kind, word, why = head_answer(told)
        rows["head"][1].append(
            f'{commit_link(told["head"]["commit"], known)} <span class="label label-{kind}" '
            f'title="{esc(why)}">{esc(word)}</span><br><small>{esc(why)}</small>'
        )
        previous = told["previous"] or {}
        rows["previous"][1].append(
            step_words(previous, known)
            if previous.get("step")
            else '<span class="text-muted">no paired step to main\'s head yet</span>'
        )
        rows["open"][1].append(open_words(told["open"], "on main"))
        rows["release"][1].append(release_words(told, told["head"], known))
        rows["release-open"][1].append(open_words(told["release_flags"], "between releases"))
        rows["release-step"][1].append(ladder_words(m, known))
    body = [
        f'<tr data-row="{key}"><th>{title}</th>'
        + "".join(
            f'<td data-machine="{esc(m.name)}">{cell}</td>' for m, cell in zip(machines, cells)
        )
        + "</tr>"
        for key, (title, cells) in rows.items()
    ]
    return "".join([*head, "</tr></thead><tbody>", *body, "</tbody></table>"])
