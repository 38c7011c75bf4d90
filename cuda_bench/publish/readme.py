"""Stage 5, publish: README.md's section "What the dashboard says today", drawn from the history
(``read.History``) by the functions the pages and ``cuda-bench report`` draw it with: one bullet
per question a page answers, each with its numbers and a link to that page's screenshot
(``docs/*.png``). ``cuda-bench report --readme`` writes the section into README.md; a test checks
that README.md says what the committed history says.
"""

from __future__ import annotations

import re
import textwrap

from cuda_bench.foundations import calls
from cuda_bench.foundations.names import short_name, split_case
from cuda_bench.foundations.paths import ROOT
from cuda_bench.foundations.text import TARGET_NS, fmt, interval, md, number
from cuda_bench.publish import summary
from cuda_bench.publish.overview import APIS, TITLES
from cuda_bench.publish.pages.html import case_label
from cuda_bench.publish.report import means_text
from cuda_bench.results import asv_files, history, overcpp_read

README = ROOT / "README.md"
#: README.md's section of what the history says, up to the next "## " heading
SECTION = "## What the dashboard says today\n\n"
#: the operation whose numbers, over C++ and paired chain the section says (docs/graph.png shows it)
EXAMPLE = "bench_device.SetCurrent.time_set_current"
WIDTH = 118  # README.md's lines


def named(name):
    """A case as the pages name it, in Markdown: its label as code, then what it uses:
    ```device.SetCurrent core` (`Device.set_current`)``."""
    uses = calls.of(name)
    return f"`{case_label(name)}`" + (f" ({', '.join(f'`{n}`' for n in uses)})" if uses else "")


def counted(found):
    """The paired step's counts as the pages say them: '0 slower · 0 faster · 155 same'."""
    return " · ".join(summary.counts_words(found))


def commits_text(name, machine, known):
    """'on nvidia-h200, 25 measured commits (6 cuda-core releases, 19 of main) and 10 paired
    steps'."""
    measured = {data["commit_hash"] for data in machine.runs}
    released = sum(bool(summary.tag(c, known)) for c in measured)
    main = sum(not summary.tag(c, known) and summary.on_main(c, known) for c in measured)
    parts = [f"{released} cuda-core release{'s' if released != 1 else ''}"] if released else []
    parts.append(f"{main} of main")
    if len(measured) - released - main:
        parts.append(f"{len(measured) - released - main} of other branches")
    return (
        f"on {name}, {len(measured)} measured commits ({', '.join(parts)}) and "
        f"{len(machine.steps)} paired step{'s' if len(machine.steps) != 1 else ''}"
    )


def head_text(told):
    """One machine's answer to "is main's head fine?", as its part of the front page says it."""
    head, previous, release = told["head"], told["previous"] or {}, told["release"]
    title = f" (“{md(head['title'])}”)" if head["title"] else ""
    if previous.get("step"):
        built = summary.built_from_words(previous["step"])
        against = (
            f"against the previous measured commit `{previous['name']}`"
            f"{f' ({built})' if built else ''}: {counted(previous['described']['counts'])}"
        )
    elif previous.get("commit"):
        against = (
            f"no paired step from the previous measured commit `{previous['name']}` yet "
            "(`cuda-bench steps` makes it)"
        )
    else:
        against = "main's first measured commit: nothing to pair it with"
    opened = told["open"]
    confirmed = sum(bool(c.get("confirmed")) for _, c in opened)
    still = (
        f"{confirmed} confirmed · {len(opened) - confirmed} not yet confirmed" if opened else "none"
    )
    said = (
        f"On {told['machine']}, main's head `{head['name']}`{title} {against}; regressions still "
    )
    said += f"open on main: {still}."
    if release and release.get("step"):
        said += (
            f" Against the newest release, {release['name']}: "
            f"{counted(release['described']['counts'])}."
        )
    elif release:
        said += (
            f" Against the newest release, {release['name']}, not measured yet: the history has "
            f"no paired step from {release['name']} to `{head['name']}` (`cuda-bench ladder` on a "
            "GPU machine makes it)."
        )
    return said


def fine(found):
    """The answer's first words: whether any machine's head is slower than what it is paired with,
    or has a regression open on main."""
    told = [m.landing for m in found.machines.values() if m.landing["head"]]
    if not told:
        return "Not known: no commit of main measured yet."
    parts = [(t["previous"] or {}).get("described", {}).get("counts", {}) for t in told] + [
        (t["release"] or {}).get("described", {}).get("counts", {}) for t in told
    ]
    if any(t["open"] for t in told) or any(p.get("regression") for p in parts):
        return "No."
    if all((t["previous"] or {}).get("step") for t in told):
        return "Yes, as far as the history reaches."
    return "Not known on every machine yet."


def head_bullet(found):
    said = " ".join(
        head_text(m.landing) for m in found.machines.values() if m.landing["head"] is not None
    )
    return f"**Is main's head fine?** {fine(found)} {said} ([front page](docs/landing.png))"


def commit_md(commit, known):
    """A commit as the pages name it (``summary.name``), in Markdown: a release by its tag, any
    other commit by its hash as code."""
    said = summary.name(commit, known)
    return said if summary.tag(commit, known) else f"`{said}`"


def flag_text(step, case, known, machine):
    """'`device.CurrentDevice core` (`Device`) ×1.219 [1.211, 1.238] from cuda-core-v0.4.2 to
    cuda-core-v0.5.1 on nvidia-h200'."""
    return (
        f"{named(case['name'])} {interval(case)} from {commit_md(step['base'], known)} to "
        f"{commit_md(step['head'], known)} on {machine}"
    )


def regressions_bullet(found):
    """What the Regressions page says: what is open on main, since the newest release and between
    releases, and what another machine start did not reproduce; the largest open slowdown."""
    known = found.known
    flags = [
        (m, s, c, k) for m, machine in found.machines.items() for s, c, k in machine.regressions
    ]
    opened = [f for f in flags if f[2]["verdict"] == "regression"]
    parts = []
    for kind, where in (("main", "on main"), ("since release", "since the newest release")):
        these = [f for f in opened if f[3] == kind]
        confirmed = sum(bool(c.get("confirmed")) for _, _, c, _ in these)
        parts.append(
            f"open {where}: {len(these)} ({confirmed} confirmed)"
            if these
            else f"nothing open {where}"
        )
    gone = [f for f in flags if f[2]["verdict"] == "not reproduced" and f[3] == "main"]
    if gone:
        parts.append(
            "not reproduced on another machine start: "
            + "; ".join(flag_text(s, c, known, m) for m, s, c, _ in gone)
        )
    said = parts[0][0].upper() + "; ".join(parts)[1:] + "."
    between = [f for f in opened if f[3] == "release"]
    if between:
        states = {}
        for _, _, case, _ in between:
            states[summary.status(case)] = states.get(summary.status(case), 0) + 1
        said += (
            f" Between releases {len(between)} slowdowns are open ("
            + ", ".join(f"{n} {state}" for state, n in states.items())
            + ")"
        )
        put_down = [
            f"{slower} slower with {told['counts']['environment']} at "
            f"{told['base_name']} → {told['head_name']} (as the Regressions page lists them"
            f"{f'; {changed - slower} more faster' if changed > slower else ''})"
            for machine in found.machines.values()
            for told in machine.releases["ladder"]
            if (changed := told["counts"]["put down"])
            for slower in [sum(c["verdict"] == "regression" for c in told["put_down"])]
        ]
        said += (
            f"; not counted, put down to the environment: {'; '.join(put_down)}" if put_down else ""
        )
        said += "."
    if opened:
        m, s, c, _ = max(opened, key=lambda f: f[2]["ratio"])
        said += f" The largest open slowdown: {flag_text(s, c, known, m)}."
    return (
        "**What got slower, where, by how much, how sure?** "
        f"{said} ([Regressions](docs/regressions.png))"
    )


def focus(found):
    """The machine the section's example is of: the one with the most measured commits (of equal
    ones, the first the pages list)."""
    machines = list(found.machines.items())
    return max(
        machines, key=lambda m: len({d["commit_hash"] for d in m[1].runs}), default=(None, None)
    )


def chain_text(chain, commit, known, build):
    """Where ``commit`` stands on a case's paired chain of one build (``history.chains``):
    '×0.100 [0.097, 0.102] at cuda-core-v0.5.1 from cuda-core-v0.3.2 (13.3.1 wheel)'; "" where
    the chain does not reach it."""
    if commit not in chain or chain[commit][4] == 0:
        return ""
    value, low, high, root, _ = chain[commit]
    said = interval({"ratio": value, "low": low, "high": high})
    return f"{said} at {commit_md(commit, known)} from {commit_md(root, known)} ({build})"


def chain_said(machine, known, case):
    """``case``'s paired chains on ``machine`` as the graph page draws them (``history.chains``
    over the measured commits in the history's order, one chain per build): where the newest
    release and main's head stand on the chain of the build each is shown in, and the range of
    asv's medians along the head's run of it; "" where it reaches neither."""
    newest = {data["commit_hash"]: data for data in machine.runs}
    commits = summary.order(newest, known)
    chains = history.chains(machine.steps, commits).get(case, {})
    shown = history.builds(machine.runs, machine.steps)
    head = (machine.landing["head"] or {}).get("commit")
    ends = dict.fromkeys(c for c in (machine.releases["newest"], head) if c in shown)
    reached = [
        said
        for said in (chain_text(chains.get(shown[c], {}), c, known, shown[c]) for c in ends)
        if said
    ]
    if not reached:
        return ""
    said = (
        f" Its paired chains on cuda.core, one per build (a chain never crosses builds): "
        f"{'; '.join(reached)}"
    )
    chain = chains.get(shown.get(head), {})
    root = chain.get(head, (None,) * 5)[3]
    benchmark, combo = split_case(case)
    medians = [
        value
        for c in commits
        if root and c in chain and chain[c][3] == root and shown[c] == shown[head]
        if number(value := asv_files.values(newest[c]).get((benchmark, tuple(combo))))
    ]
    if len(medians) > 1:
        said += (
            f", while asv's medians along that last run go from {fmt(min(medians))} to "
            f"{fmt(max(medians))}"
        )
    return said + "."


def shown_numbers(row):
    """Each library's number as the front page's cell leads with it: its time in one process where
    an over-C++ run timed it, else asv's median, and which it is."""
    shown = []
    for api in APIS:
        cell = row["cells"].get(api) or {}
        one = cell.get("one_process")
        if one:
            shown.append((TITLES[api], fmt(one["py_ns"] * 1e-9), "in one process"))
        elif number(cell.get("value")):
            shown.append((TITLES[api], fmt(cell["value"]), "asv's medians"))
    kinds = {kind for _, _, kind in shown}
    if len(kinds) == 1:
        return ", ".join(f"{title} {value}" for title, value, _ in shown) + f" ({kinds.pop()})"
    return (
        ", ".join(
            f"{title} {value}" + (" (asv's median)" if kind == "asv's medians" else "")
            for title, value, kind in shown
        )
        + " (in one process, but where asv's median is said)"
    )


def example_bullet(found):
    """The front page's row of :data:`EXAMPLE` on the :func:`focus` machine: one number per library,
    cuda.core's cost over its C++ twin, and its paired chain (:func:`chain_said`)."""
    name, machine = focus(found)
    row = next(
        (
            r
            for r in found.rows
            if r["machine"] == name and r["benchmark"] == EXAMPLE and not r["case"]
        ),
        None,
    )
    if row is None:
        return ""
    core = f"{EXAMPLE}('core')"
    uses = ", ".join(f"`{n}`" for n in calls.of(core))
    uses = f" ({uses} on cuda.core)" if uses else ""
    said = (
        f"**cuda.core against cuda.bindings, CuPy and C++?** `{short_name(EXAMPLE)}`{uses} at "
        f"`{row['commit'][:9]}` on {name}: {shown_numbers(row)}"
    )
    over = overcpp_read.over_text(row["cells"].get("core") or {})
    target = fmt(TARGET_NS * 1e-9)
    said += (
        f"; cuda.core over its C++ twin: {over} (✓ under cuda-python's target of {target}, ✗ "
        "above, #1580)."
        if over
        else "."
    )
    return f"{said}{chain_said(machine, found.known, core)} ([graph](docs/graph.png))"


def releases_bullet(found):
    """The newest release step of each machine that has a release ladder, as the Releases page
    says it: counts, geometric means per library, the largest slowdown and speedup."""
    parts = []
    for name, machine in found.machines.items():
        if not machine.releases["ladder"]:
            continue
        told = machine.releases["ladder"][0]
        said = (
            f"On {name}, {told['base_name']} → {told['head_name']}: {counted(told['counts'])}; the "
            f"geometric mean of the ratios per library (cases): {means_text(told['geomean'])}"
        )
        for verdict, words in (("regression", "slowdown"), ("improvement", "speedup")):
            case = next((c for c in told["changed"] if c["verdict"] == verdict), None)
            if case:
                said += f"; the largest {words} {named(case['name'])} {interval(case)}"
        parts.append(said + ".")
    if not parts:
        return ""
    return (
        f"**Each release against the one before?** {' '.join(parts)} `cuda-bench report "
        "--releases` prints every step ([a release step](docs/release-step.png))."
    )


def section(found):
    """The section's text (after its heading): how the pages are built, then one bullet per
    question, each wrapped within README.md's width."""
    machines = "; ".join(
        commits_text(name, machine, found.known) for name, machine in found.machines.items()
    )
    intro = (
        "Built from the committed history by `cuda-bench publish`, which needs neither a clone nor "
        f"the network: {machines or 'no results yet'}. Each page answers one question in a few "
        "seconds (`cuda-bench report --readme` writes what follows from the same history, with the "
        "code the pages are drawn with):"
    )
    bullets = [
        head_bullet(found),
        regressions_bullet(found),
        example_bullet(found),
        releases_bullet(found),
    ]
    lines = [fill(intro), ""]
    lines += [fill(f"- {b}", "  ") for b in bullets if b]
    return "\n".join(lines) + "\n"


def fill(text, indent=""):
    """``text`` wrapped within README.md's width, a link's words kept on one line."""
    kept = re.sub(r"\[[^\]]*\]\(", lambda m: m.group().replace(" ", "\0"), text)
    return textwrap.fill(
        kept, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    ).replace("\0", " ")


def bounds(text):
    """(start, end) of the section's body in ``text`` (README.md): from after its heading to the
    blank line before the next "## " heading."""
    start = text.index(SECTION) + len(SECTION)
    end = text.index("\n## ", start) + 1
    return start, end


def rewritten(text, found):
    """``text`` (README.md) with the section written from ``found``."""
    start, end = bounds(text)
    return text[:start] + section(found) + "\n" + text[end:]


def write(found, path=None):
    """Write the section into ``path`` (:data:`README`); True where that changed the file."""
    path = path or README
    text = path.read_text()
    new = rewritten(text, found)
    if new != text:
        path.write_text(new)
    return new != text
