"""The pieces every page of the dashboard shares: the frame and its navigation, the banner for what
could not be read, links to commits and cases, the table of a step's changed cases, its work per
call. Everything a page did not write itself goes through :func:`esc`."""

from __future__ import annotations

import html
import re
from urllib.parse import quote, urlencode

from cuda_bench.foundations import calls, words
from cuda_bench.foundations import counts as counting
from cuda_bench.foundations.names import short_name, split_case
from cuda_bench.foundations.stats import CONFIDENCE, CONFIRMED_RULE
from cuda_bench.foundations.text import (
    PER_CALL,
    interval,
    per_call,
)
from cuda_bench.publish import summary
from cuda_bench.results import asv_files, counts_read, history

METHOD = "https://github.com/NVIDIA/cuda-python-bench/blob/main/docs/method.md"


COMMIT_URL = "https://github.com/NVIDIA/cuda-python/commit/"


NAV = [
    ("index.html", "Main's head"),
    ("releases.html", "Releases"),
    ("regressions.html", "Regressions"),
    ("graph.html", "Graphs"),
    ("steps.html", "Steps"),
    ("builds.html", "Build time"),
    ("asv.html", "asv's pages"),
    ("glossary.html", "Glossary"),
]


def esc(text):
    """``text`` as HTML text or as an attribute's value in double or single quotes: every page
    escapes what it did not write itself (commit titles, tags, case names, hashes, what a record
    says)."""
    return html.escape(str(text), quote=True)


#: text inside these elements is never linked to the glossary: links, code, headings of a table,
#: scripts, the page's title, form controls
UNLINKED = ("a", "code", "script", "style", "title", "th", "select", "option", "button", "h1")
_TAG = re.compile(r"(<[^>]*>)")
_NAME = re.compile(r"</?([a-zA-Z0-9]+)")


def linked(body, href="glossary.html"):
    """``body`` (HTML) with the first saying of each glossary word (``words.SAID``) in its text
    linked to the word's entry (``words.anchor``); attributes, and the text inside
    :data:`UNLINKED` elements, are left as they are."""
    wanted = {
        word: re.compile(rf"(?<![\w-])(?:{said})(?![\w-])", re.IGNORECASE)
        for word, said in words.SAID.items()
    }
    out, inside = [], []
    for part in _TAG.split(body):
        if part.startswith("<"):
            name = (_NAME.match(part) or [None, ""])[1].lower()
            if name in UNLINKED and not part.endswith("/>"):
                if part.startswith("</"):
                    if name in inside:
                        inside.remove(name)
                else:
                    inside.append(name)
            out.append(part)
            continue
        while part and not inside and wanted:
            found = [(m.start(), word, m) for word, rx in wanted.items() if (m := rx.search(part))]
            if not found:
                break
            _, word, match = min(found, key=lambda f: f[0])
            del wanted[word]
            out.append(
                part[: match.start()]
                + f'<a class="word" href="{href}#{words.anchor(word)}">{match.group(0)}</a>'
            )
            part = part[match.end() :]
        out.append(part)
    return "".join(out)


def page(title, body, current, banner=""):
    """One of the project's pages: the navigation, ``banner`` (:func:`unreadable_html`) on top,
    then ``body``, its glossary words linked to their entries (:func:`linked`; not on the glossary
    itself); ``site.js`` makes the link to asv's pages say how to serve them where the page was
    opened from disk."""
    if current != "glossary.html":
        body = linked(body)
    active = ' class="active"'
    nav = " ".join(
        f'<a href="{href}"{active if href == current else ""}>{esc(label)}</a>'
        for href, label in NAV
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        '<link rel="icon" href="swallow.ico">'
        '<link rel="stylesheet" href="vendor/bootstrap/dist/css/bootstrap.min.css">'
        '<link rel="stylesheet" href="site.css">'
        '<link rel="alternate" type="application/atom+xml" title="Regressions" '
        'href="regressions.xml">'
        '<script src="site.js"></script>'
        "</head>\n<body><nav "
        f'class="site">{nav}</nav>\n<main>\n{banner}<h1>{esc(title)}</h1>\n{body}\n'
        "</main></body></html>\n"
    )


def unreadable_html(found, results_dir, known=None):
    """The banner every page carries while part of the history cannot be read (``asv_files.noted``):
    each file and line, and why, and the step or commit it is about where that could be read
    (:func:`touched_words`); "" when all of it was read."""
    if not found:
        return ""
    items = "".join(
        f'<li data-file="{esc(asv_files.shown(path, results_dir))}" data-line="{esc(line or "")}">'
        f"<code>{esc(asv_files.shown(path, results_dir))}</code>{esc(asv_files.place(line))}: "
        f"{esc(why)}{touched_words(asv_files.touched(path, line), known or {})}</li>"
        for path, line, why in found
    )
    return (
        '<div class="alert alert-warning unreadable" role="alert"><b>Part of the history could not '
        "be read</b>"
        " and is left out of every page: what they say may change once it is mended "
        "(<code>cuda-bench "
        f"publish</code> and <code>report</code> exit 2 until then).<ul>{items}</ul></div>\n"
    )


def commit_link(commit, known, url=COMMIT_URL):
    info = known.get(commit) or {}
    title = f' title="{esc(info["title"])}"' if info.get("title") else ""
    return (
        f'<a class="commit" href="{esc(url + quote(commit))}" data-commit="{esc(commit)}"{title}>'
        f"{esc(summary.name(commit, known))}</a>"
    )


def case_label(name):
    """``bench_device.SetCurrent.time_set_current('core')`` -> ``device.SetCurrent core``."""
    benchmark, combo = split_case(name)
    return " ".join([short_name(benchmark), *(c.strip("'") for c in combo)])


def calls_html(names):
    """What a form uses, as a maintainer types it (``calls.declared``):
    '<small class="calls"><code>Device.set_current</code></small>'; "" for none."""
    if not names:
        return ""
    return '<small class="calls">' + ", ".join(f"<code>{esc(n)}</code>" for n in names) + "</small>"


def case_html(machine, name):
    """A case as the pages name it: its label, linked to its graph, and what it uses
    (:func:`calls_html`)."""
    return (
        f'<a href="{esc(case_href(machine, name))}">{esc(case_label(name))}</a> '
        f"{calls_html(calls.of(name))}"
    )


def code_html(name):
    """A case by its full name, as code, and what it uses (:func:`calls_html`)."""
    return f"<code>{esc(name)}</code> {calls_html(calls.of(name))}"


def rule_html():
    """The rule of the words confirmed, not yet confirmed and not reproduced, as every page says
    it."""
    return f'<span class="rule">{esc(CONFIRMED_RULE[0].upper() + CONFIRMED_RULE[1:])}</span>'


def graph_href(machine, benchmark, case=()):
    params = {"machine": machine, "benchmark": benchmark}
    if case:
        params["case"] = " ".join(case)
    return "graph.html#" + urlencode(params, quote_via=quote)


def case_href(machine, name):
    benchmark, combo = split_case(name)
    return graph_href(machine, benchmark, [c.strip("'") for c in combo[1:]])


STATUS_CLASS = {
    "confirmed": "danger",
    "not yet confirmed": "warning",
    "not reproduced": "muted",
    "improvement": "success",
    "regression": "danger",
}


def changed_table(machine, cases, kind="changed"):
    """The cases a step judged slower or faster: case, ratio [95 % interval], status, per call."""
    if not cases:
        return ""
    out = [
        f'<table class="table table-condensed {kind}"><thead><tr><th>case</th><th>ratio '
        f"[{CONFIDENCE:.0%} "
        f"interval]</th><th>status</th><th>{esc(PER_CALL)}</th></tr></thead><tbody>"
    ]
    for case in cases:
        state = summary.status(case)
        word = summary.status_word(case)
        out.append(
            f'<tr class="case" data-case="{esc(case["name"])}" '
            f'data-verdict="{esc(case["verdict"])}" '
            f'data-ratio="{case["ratio"]!r}" data-low="{case["low"]!r}" '
            f'data-high="{case["high"]!r}" '
            f'data-status="{esc(state)}"><td>{case_html(machine, case["name"])}</td>'
            f"<td>{interval(case)}</td>"
            f'<td class="text-{STATUS_CLASS.get(state, "muted")}">{esc(word)}</td>'
            f'<td class="per-call">{per_call_html(case)}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def per_call_html(case):
    """A case's times per call (``text.per_call``) in a table's cell: the two times kept on one line
    (``.times``), what is said of them after free to wrap."""
    pair, paren, rest = per_call(case).partition(" (")
    return f'<span class="times">{esc(pair)}</span>{esc(paren + rest)}'


def work_html(told, where=""):
    """What changed in the work per call over a step (``summary.work_changed``; ``where``: which
    step, where the page shows more than one): each changed case, as counted; that nothing changed
    in what both commits counted; or, where a side was not counted, nothing at all."""
    work = told.get("work")
    if work is None:
        return ""
    notes = "".join(
        f' <small class="text-muted">{code_text(note)}</small>' for note in work["caveats"]
    )
    changed, said = summary.work_said(work)
    if not changed:
        return f'<p class="work" data-changed="0">Work per call{where}: {said}.{notes}</p>'
    items = "".join(
        f'<li data-case="{esc(name)}"><code>{esc(counts_read.case_label(name))}</code>: '
        f"{esc(text)}</li>"
        for name, text in work["changed"].items()
    )
    return (
        f'<div class="work" data-changed="{len(work["changed"])}"><b>Work per call{where} '
        f"{said}</b> (exact "
        f"counts, no interval needed):{notes}<ul>{items}</ul></div>"
    )


def unseen_html(shown):
    """What the work counts cannot see, said once under a page's work lines (``shown``: the page has
    some)."""
    return (
        f'<p class="unseen"><small class="text-muted">{esc(counting.UNSEEN)}</small></p>'
        if shown
        else ""
    )


def code_text(text):
    """``text`` escaped, its `backticked` parts as code."""
    parts = esc(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def counts_text(found):
    return " · ".join(esc(part) for part in summary.counts_words(found))


def one_side_html(machine, step):
    """The cases only one build of a step has, named in a collapsed list (``summary.one_side``); ""
    for none."""
    found = summary.one_side(step)
    if not found:
        return ""
    items = "".join(
        f'<li data-case="{esc(name)}" data-side="{esc(side)}">'
        f"{case_html(machine, name)}: {esc(words)}</li>"
        for name, side, words in found
    )
    return (
        f'<details class="one-side" data-cases="{len(found)}"><summary>{len(found)} on one '
        f"side only</summary><ul>{items}</ul></details>"
    )


def step_build(step):
    """Which build a step paired, in a few words: "cuda-bindings 13.3.1 wheel", or both sides'
    where they differ."""
    family = history.family(step)
    if family:
        return f"cuda-bindings {family}"
    return f"cuda-bindings {history.side_build(step, 'base')} → {history.side_build(step, 'head')}"


def verdict_badge(found):
    if found.get("identical"):
        return '<span class="label label-info">identical builds</span>'
    if found["regression"]:
        return f'<span class="label label-danger">{found["regression"]} slower</span>'
    if found["improvement"]:
        return f'<span class="label label-success">{found["improvement"]} faster</span>'
    return '<span class="label label-default">no change</span>'


def banner(found):
    """The banner of every page of ``found`` (``read.History``): :func:`unreadable_html` of what it
    could not read."""
    return unreadable_html(found.unreadable, found.results_dir, found.known)


def touched_words(named, known):
    """What a line that could not be read is about, as far as it could be read
    (``asv_files.touches``): " (a record of the step cuda-core-v0.4.2 → cuda-core-v0.5.1)", " (a
    record of a step from …)", " (a record of commit …)", or ""."""
    base, head, commit = (named.get(k) for k in ("base", "head", "commit"))
    if base and head:
        what = f"the step {summary.name(base, known)} → {summary.name(head, known)}"
    elif base:
        what = f"a step from {summary.name(base, known)}"
    elif commit:
        what = f"commit {summary.name(commit, known)}"
    else:
        return ""
    return f" (a record of {esc(what)}: what the pages say of it rests on its other records)"


def damaged_html(damaged, base, head):
    """Above a step that a record line which could not be read is about (``damaged``: [(file, line,
    the commits it names)] of the machine's steps, ``read.Machine.damaged``): which line, and that
    what the step shows rests on its other records; "" for none."""
    found = [
        (path, line)
        for path, line, named in damaged
        if named.get("base") == base and named.get("head") in (None, head)
    ]
    if not found:
        return ""
    where = ", ".join(f"{path.name} line {line}" for path, line in found)
    return (
        '<p class="damaged alert alert-warning">A record of this step could not be read '
        f"({esc(where)}): what it shows comes from its other records, and may leave out what that "
        "one held.</p>"
    )
