"""Stage 5, publish: the static dashboard in ``html/``, from ``results/`` alone, saying only what the paired steps say.

    python -m cuda_bench.publish [--config asv.conf.json]     # cuda-bench publish

``asv publish`` writes asv's pages into a new folder next to ``html/``: the project's asv plugin gives it the
history from ``results/commits.json`` (commit order, dates, release tags; no clone, no network) and one line per
case across every cuda-bindings environment. :func:`finish` then makes the site (plain ``asv publish`` calls it
too, through the plugin); only when every step has worked does the folder replace ``html/`` (a failed publish
leaves the old dashboard). A results file or a record's line that cannot be read is left out with one line naming
it, every page says so on top (file and line), and the command exits 2 (``results.unreadable``).

* ``index.html``, the front page: per machine, main's head, its paired verdicts against the previous measured
  commit and against the newest release, the regressions still open, and each operation at the head: one number
  per cell (asv's median), a badge where the paired step to the head flagged the case, the rest on hover;
* ``releases.html``: each cuda-core release against the one before it, paired, and the newest release against
  main's head (or that the history lacks that step);
* ``regressions.html``: every flag with its ratio, interval, status and the releases by name; ``steps.html``:
  every paired step; ``graph.html``: each case's paired chain per library, asv's medians as context
  (its data as scripts, so that it works opened from disk too);
  ``glossary.html``: the words they use (``cuda_bench.words``);
* asv's own app at ``asv.html``: self-contained (its libraries copied from ``dashboard/vendor/``, in the
  repository), its Benchmark list, ``regressions.json`` and Atom feed fed by the paired steps, not by asv's step
  detection on unpaired medians.
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote, urlencode

from cuda_bench import calls, history, overcpp, overview, results, summary, words
from cuda_bench import counts as counting
from cuda_bench.names import CPP, HARNESS, case_name, cpp_id, short_name, split_case
from cuda_bench.overview import APIS, TITLES
from cuda_bench.paths import ASV_PAGES_ONLY, CONF, DASHBOARD, ROOT, VENDOR, WORK
from cuda_bench.report import OLDER
from cuda_bench.stats import CONFIDENCE, CONFIRMED_RULE
from cuda_bench.text import (
    PER_CALL,
    TARGET_NS,
    cleared_text,
    fmt,
    fmt_net,
    interval,
    last_line,
    measurements,
    number,
    per_call,
    signed,
    standing,
)

METHOD = "https://github.com/NVIDIA/cuda-python-bench/blob/main/docs/method.md"
COMMIT_URL = "https://github.com/NVIDIA/cuda-python/commit/"

# the end of each CDN address asv's pages use -> the same library's file in dashboard/vendor/ (its README says
# which npm package and version each comes from, and its licence)
ASSETS = {
    "jquery-3.3.1.min.js": "jquery/dist/jquery.min.js",
    "flot/0.8.3/jquery.flot.min.js": "flot/jquery.flot.js",
    "flot/0.8.3/jquery.flot.time.min.js": "flot/jquery.flot.time.js",
    "flot/0.8.3/jquery.flot.selection.min.js": "flot/jquery.flot.selection.js",
    "flot/0.8.3/jquery.flot.categories.min.js": "flot/jquery.flot.categories.js",
    "flot-orderbars@1.0.0/js/jquery.flot.orderBars.js": "flot-orderbars/js/jquery.flot.orderBars.js",
    "stupidtable/1.0.1/stupidtable.min.js": "stupid-table-plugin/stupidtable.min.js",
    "blueimp-md5/2.19.0/js/md5.min.js": "blueimp-md5/js/md5.min.js",
    "bootstrap@3.1.1/dist/js/bootstrap.min.js": "bootstrap/dist/js/bootstrap.min.js",
    "bootstrap@3.1.1/dist/css/bootstrap.min.css": "bootstrap/dist/css/bootstrap.min.css",
}
# bootstrap.min.css loads ../fonts/glyphicons-*; the graph page's band and markers
EXTRA_FILES = ["bootstrap/dist/fonts", "flot/jquery.flot.fillbetween.js", "flot/jquery.flot.symbol.js"]
SITE_FILES = ["site.css", "asv-extra.js", "graph.js"]  # dashboard/site/
TAG = re.compile(r'<(script|link)\b[^>]*?(?:src|href)="(https?://[^"]+)"[^>]*>(?:</script>)?')


class DashboardError(Exception):
    pass


# --- self-contained pages --------------------------------------------------------------------------
def vendor(html_dir):
    """Copy the libraries (``dashboard/vendor/``, with their licences) into html/vendor and point every page at
    them; no address outside html/ stays, and nothing is fetched."""
    missing = [path for path in [*ASSETS.values(), *EXTRA_FILES] if not (VENDOR / path).exists()]
    if missing:
        raise DashboardError(f"{VENDOR} lacks {', '.join(missing)} (see its README.md)")
    shutil.copytree(VENDOR, html_dir / "vendor", dirs_exist_ok=True)
    for name in SITE_FILES:
        shutil.copy2(DASHBOARD / "site" / name, html_dir / name)

    def local(match):
        kind, url = match.groups()
        for suffix, path in ASSETS.items():
            if url.endswith(suffix):
                if kind == "script":
                    return f'<script src="vendor/{path}"></script>'
                return f'<link rel="stylesheet" href="vendor/{path}">'
        raise DashboardError(f"{url}: an asset this script does not know (a newer asv?); add it to ASSETS")

    for page in html_dir.glob("*.html"):
        page.write_text(TAG.sub(local, page.read_text()))


def patch(path, old, new):
    """Replace ``old`` by ``new`` once in one of asv's files; fail loudly when asv changed it."""
    text = path.read_text()
    if new in text:
        return
    if text.count(old) != 1:
        raise DashboardError(f"{path.name}: no single {old!r} to patch (a newer asv?)")
    path.write_text(text.replace(old, new))


NAV = [("index.html", "Main's head"), ("releases.html", "Releases"), ("regressions.html", "Regressions"),
       ("graph.html", "Graphs"), ("steps.html", "Steps"), ("asv.html", "asv's pages"),
       ("glossary.html", "Glossary")]


def asv_app(html_dir):
    """asv's app moves to asv.html (the front page is the project's): its navigation bar leads back to the
    project's pages on one line, its Regressions route opens regressions.html, its graphs space commits evenly
    with the legend beside the plot, one colour per library, times in ns or µs and release names readable."""
    app = html_dir / "asv.html"
    (html_dir / "index.html").rename(app)
    patch(app, "<title>airspeed velocity</title>", "<title>cuda-python-bench: asv's pages</title>")
    patch(app, '<link rel="alternate" type="application/atom+xml" title="Regressions" href="regressions.xml"/>',
          '<link rel="alternate" type="application/atom+xml" title="Regressions" href="regressions.xml"/>\n'
          '    <link href="site.css" rel="stylesheet" type="text/css"/>\n'
          '    <script src="asv-extra.js"></script>')
    patch(app, re.search(r'<p class="navbar-text">.*?</p>', app.read_text(), re.S).group(0),
          '<p class="navbar-text"><a href="index.html" class="navbar-link"><b>cuda-python-bench</b></a>: '
          '<a id="project-name" href="#" class="navbar-link">project</a></p>')
    patch(app, '<li id="nav-li-regressions"><a href="#/regressions">Regressions</a></li>',
          '<li><a href="regressions.html">Regressions</a></li>\n'
          '\t<li><a href="releases.html">Releases</a></li>\n'
          '\t<li><a href="index.html">Main\'s head</a></li>\n'
          '\t<li><a href="glossary.html">Glossary</a></li>')
    patch(app, '<div style="position: absolute; top: 48px; left: 0; right: 0; bottom: 100px;">',
          '<div id="cuda-bench-legend" style="position: absolute; top: 48px; right: 0; width: 260px; bottom: 100px; '
          'overflow: auto"></div>\n'
          '          <div style="position: absolute; top: 48px; left: 0; right: 270px; bottom: 100px;">')
    graphs = html_dir / "graphdisplay.js"
    patch(graphs, "        if (params['x-axis-scale']) {",
          "        if (!params['x-axis-scale']) { params['x-axis-scale'] = ['even']; }  // cuda-python-bench\n"
          "        if (params['x-axis-scale']) {")
    patch(graphs, 'position: "nw",', 'position: "nw", container: $("#cuda-bench-legend"),  // cuda-python-bench')
    patch(graphs, "                        label: graph_content[1],\n",
          "                        label: graph_content[1],\n"
          "                        color: cudaBench.color(graph_content[1]),  // cuda-python-bench\n")
    patch(graphs, "                    return (v / multiplier).toPrecision(3);",
          "                    return unit_list === $.asv.time_units ? cudaBench.time(v)  // cuda-python-bench\n"
          "                        : (v / multiplier).toPrecision(3);")
    patch(graphs, "                options.yaxis.axisLabel = unit_name;",
          "                options.yaxis.axisLabel = unit_list === $.asv.time_units ? 'time per call' : unit_name;")
    patch(graphs, '"top: -2ex;" +', '"top: 4px; writing-mode: vertical-rl; z-index: 1;" +  // cuda-python-bench')
    patch(graphs, "font-size:smaller;'>\" + tag + \"</div>\");",
          "font-size:smaller;'>\" + $('<span>').text(tag).html() + \"</div>\");")
    listing = html_dir / "summarylist.js"
    patch(listing, "                text = text.replace('-', '\\u2212');",
          "                text = text.replace('-', '\\u2212');\n"
          "                if (row.paired) { text = row.paired; }  // cuda-python-bench: the paired step's ratio")
    patch(listing, "                if (change > 5) {",
          "                if (row.verdict ? row.verdict == 'regression' : change > 5) {")
    patch(listing, "                else if (change < -5) {",
          "                else if (row.verdict ? row.verdict == 'improvement' : change < -5) {")
    patch(listing, "                    commit_a.text(commit_1 + '...' + commit_2);",
          "                    commit_a.text(row.paired_where || (commit_1 + '...' + commit_2));")
    patch(listing, "                    commit_a.text(commit_2);",
          "                    commit_a.text(row.paired_where || commit_2);")
    patch(listing, "'<th data-sort=\"float\">Recent change</th>' +",
          "'<th data-sort=\"float\">Newest paired change</th>' +")


# --- shared pieces of the project's pages ----------------------------------------------------------------
def esc(text):
    """``text`` as HTML text or as an attribute's value in double or single quotes: every page escapes what it did
    not write itself (commit titles, tags, case names, hashes, what a record says)."""
    return html.escape(str(text), quote=True)


def page(title, body, current, banner=""):
    """One of the project's pages: the navigation, ``banner`` (:func:`unreadable_html`) on top, then ``body``."""
    active = ' class="active"'
    nav = " ".join(f'<a href="{href}"{active if href == current else ""}>{esc(label)}</a>' for href, label in NAV)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            '<link rel="icon" href="swallow.ico">'
            '<link rel="stylesheet" href="vendor/bootstrap/dist/css/bootstrap.min.css">'
            '<link rel="stylesheet" href="site.css">'
            '<link rel="alternate" type="application/atom+xml" title="Regressions" href="regressions.xml">'
            f'</head>\n<body><nav class="site">{nav}</nav>\n<main>\n{banner}<h1>{esc(title)}</h1>\n{body}\n'
            '</main></body></html>\n')


def unreadable_html(found, results_dir):
    """The banner every page carries while part of the history cannot be read (``results.noted``): each file and
    line, and why; "" when all of it was read."""
    if not found:
        return ""
    items = "".join(f'<li data-file="{esc(results.shown(path, results_dir))}" data-line="{line or ""}"><code>'
                    f'{esc(results.shown(path, results_dir))}</code>{f" line {line}" if line else ""}: {esc(why)}</li>'
                    for path, line, why in found)
    return ('<div class="alert alert-warning unreadable" role="alert"><b>Part of the history could not be read</b>'
            " and is left out of every page: what they say may change once it is mended (<code>cuda-bench "
            f"publish</code> and <code>report</code> exit 2 until then).<ul>{items}</ul></div>\n")


def commit_link(commit, known, url=COMMIT_URL):
    info = known.get(commit) or {}
    title = f' title="{esc(info["title"])}"' if info.get("title") else ""
    return (f'<a class="commit" href="{esc(url + quote(commit))}" data-commit="{esc(commit)}"{title}>'
            f'{esc(summary.name(commit, known))}</a>')


def date_text(ms):
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if ms else "not recorded"


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
    return (f'<a href="{esc(case_href(machine, name))}">{esc(case_label(name))}</a> '
            f'{calls_html(calls.of(name))}')


def code_html(name):
    """A case by its full name, as code, and what it uses (:func:`calls_html`)."""
    return f"<code>{esc(name)}</code> {calls_html(calls.of(name))}"


def rule_html():
    """The rule of the words confirmed, not yet confirmed and not reproduced, as every page says
    it."""
    return f'<span class="rule">{esc(CONFIRMED_RULE[0].upper() + CONFIRMED_RULE[1:])}</span>'


def ratio_text(case):
    return f"×{case['ratio']:.3f} [{case['low']:.3f}, {case['high']:.3f}]"


def graph_href(machine, benchmark, case=()):
    params = {"machine": machine, "benchmark": benchmark}
    if case:
        params["case"] = " ".join(case)
    return "graph.html#" + urlencode(params, quote_via=quote)


def case_href(machine, name):
    benchmark, combo = split_case(name)
    return graph_href(machine, benchmark, [c.strip("'") for c in combo[1:]])


STATUS_CLASS = {"confirmed": "danger", "not yet confirmed": "warning", "not reproduced": "muted",
                "improvement": "success", "regression": "danger"}


def changed_table(machine, cases, kind="changed"):
    """The cases a step judged slower or faster: case, ratio [95 % interval], status, per call."""
    if not cases:
        return ""
    out = [f'<table class="table table-condensed {kind}"><thead><tr><th>case</th><th>ratio [{CONFIDENCE:.0%} '
           f'interval]</th><th>status</th><th>{esc(PER_CALL)}</th></tr></thead><tbody>']
    for case in cases:
        state = summary.status(case)
        word = summary.status_word(case)
        out.append(f'<tr class="case" data-case="{esc(case["name"])}" data-verdict="{esc(case["verdict"])}" '
                   f'data-ratio="{case["ratio"]!r}" data-low="{case["low"]!r}" data-high="{case["high"]!r}" '
                   f'data-status="{esc(state)}"><td>{case_html(machine, case["name"])}</td>'
                   f'<td>{ratio_text(case)}</td>'
                   f'<td class="text-{STATUS_CLASS.get(state, "muted")}">{esc(word)}</td>'
                   f'<td class="per-call">{esc(per_call(case))}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def work_html(told, where=""):
    """What changed in the work per call over a step (``summary.work_changed``; ``where``: which step, where the
    page shows more than one): each changed case, as counted; that nothing changed in what both commits counted;
    or, where a side was not counted, nothing at all."""
    work = told.get("work")
    if work is None:
        return ""
    notes = "".join(f' <small class="text-muted">{code_text(note)}</small>' for note in work["caveats"])
    changed, said = summary.work_said(work)
    if not changed:
        return f'<p class="work" data-changed="0">Work per call{where}: {said}.{notes}</p>'
    items = "".join(f'<li data-case="{esc(name)}"><code>{esc(counting.case_label(name))}</code>: {esc(text)}</li>'
                    for name, text in work["changed"].items())
    return (f'<div class="work" data-changed="{len(work["changed"])}"><b>Work per call{where} {said}</b> (exact '
            f"counts, no interval needed):{notes}<ul>{items}</ul></div>")


def unseen_html(shown):
    """What the work counts cannot see, said once under a page's work lines (``shown``: the page has some)."""
    return f'<p class="unseen"><small class="text-muted">{esc(counting.UNSEEN)}</small></p>' if shown else ""


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
    items = "".join(f'<li data-case="{esc(name)}" data-side="{esc(side)}">'
                    f"{case_html(machine, name)}: {esc(words)}</li>" for name, side, words in found)
    return (f'<details class="one-side" data-cases="{len(found)}"><summary>{len(found)} on one '
            f"side only</summary><ul>{items}</ul></details>")


def verdict_badge(found):
    if found.get("identical"):
        return '<span class="label label-info">identical builds</span>'
    if found["regression"]:
        return f'<span class="label label-danger">{found["regression"]} slower</span>'
    if found["improvement"]:
        return f'<span class="label label-success">{found["improvement"]} faster</span>'
    return '<span class="label label-default">no change</span>'


# --- the front page ------------------------------------------------------------------------------------
HOW_TO_READ = f"""<details class="how"><summary>How to read this page</summary>
<p>A <b>paired step</b> times two builds of cuda-python in turn on one core and gives each case a ratio (head over
base) with a {CONFIDENCE:.0%} interval. A case is <b>slower</b> or <b>faster</b> only when its whole interval lies
beyond the case's threshold (a percent or two, calibrated per case on the machine). {rule_html()}.
The table's numbers are asv's medians per call at main's head: context, since they move with the
machine's state (up to 2× on the H200), never a change; a cell's hover says every other number of
its case. The rules and the evidence:
<a href="{METHOD}">docs/method.md</a>.</p></details>"""


def verdict_row(key, heading, part, missing):
    """One row of the landing page's verdicts: a paired step's counts and changed cases, or why there is none."""
    if part and part.get("step"):
        told = part["described"]
        return (f'<tr data-against="{key}" data-base="{esc(told["base"])}" data-head="{esc(told["head"])}">'
                f'<th>{heading}</th>'
                f'<td>{verdict_badge(told["counts"])}</td><td>{counts_text(told["counts"])} '
                f'<small class="text-muted">(paired {esc(told["step"]["date"][:10])})</small></td></tr>')
    return f'<tr data-against="{key}" class="missing"><th>{heading}</th><td></td><td>{missing}</td></tr>'


def render_landing(told, rows, known):
    """One machine's part of the front page: main's head, the verdicts, the open regressions, each operation."""
    machine = told["machine"]
    params = told["params"]
    out = [f'<section class="machine" data-machine="{esc(machine)}"><h2>{esc(machine)} <small>'
           f'{esc(params.get("gpu", "no GPU"))}, driver {esc(params.get("driver", "-"))}</small></h2>']
    head, lost = told["head"], told.get("lost_head")
    if lost:
        title = f" “{esc(lost['title'])}”" if lost["title"] else ""
        out.append(f'<p class="lost-head" data-commit="{esc(lost["commit"])}">Main\'s head: '
                   f'{commit_link(lost["commit"], known)}{title}: <b>its results file could not be read</b> '
                   f'(<code>{esc(lost["file"])}</code>{" line " + str(lost["line"]) if lost["line"] else ""}: '
                   f'{esc(lost["why"])}). Nothing below is of it.</p>')
    if head is None:
        out.append("<p>No commit of main measured on this machine yet.</p></section>")
        return "\n".join(out)
    title = f" “{esc(head['title'])}”" if head["title"] else ""
    said = "The newest commit of main whose results could be read" if lost else "Main's head"
    out.append(f'<p class="head" data-commit="{esc(head["commit"])}">{said}: {commit_link(head["commit"], known)}'
               f'{title}, committed {date_text(head["date"])[:10]}; asv measured it {date_text(head["measured"])}.</p>')
    out.append('<table class="table verdicts"><tbody>')
    previous = told["previous"] or {}
    prev_name = f'{commit_link(previous["commit"], known)} (the previous measured commit)' \
        if previous.get("commit") else "the previous measured commit"
    out.append(verdict_row("previous", f"against {prev_name}", previous,
                           "no paired step to main's head yet: <code>cuda-bench steps</code> makes it"
                           if previous.get("commit") else "main's first measured commit: nothing to pair it with"))
    release = told["release"]
    if release:
        out.append(verdict_row(
            "release", f'against {commit_link(release["commit"], known)} (the newest release)', release,
            f'<b>not measured yet</b>: the history has no paired step from {esc(release["name"])} to '
            f'{esc(head["name"])}. <code>cuda-bench ladder</code> on a GPU machine measures every release, then '
            "main's head, and pairs each with the one before it."))
    opened = told["open"]
    confirmed = sum(bool(c.get("confirmed")) for _, c in opened)
    text = (f"{confirmed} confirmed · {len(opened) - confirmed} not yet confirmed" if opened
            else "none")
    ladder = (f' <small class="text-muted">(and {told["release_open"]} between releases: '
              '<a href="releases.html">Releases</a>)</small>') if told["release_open"] else ""
    badge = ('<span class="label label-danger">open</span>' if opened
             else '<span class="label label-default">none</span>')
    out.append(f'<tr data-against="open"><th>regressions still open on main</th><td>{badge}</td>'
               f'<td><a href="regressions.html">{text}</a>{ladder}</td></tr>')
    out.append("</tbody></table>")
    for key, heading in (("previous", "Changed since the previous measured commit"),
                         ("release", "Changed since the newest release")):
        part = told.get(key) or {}
        if part.get("step") and (part["described"]["changed"] or (part["described"]["work"] or {}).get("changed")):
            out.append(f'<h3 class="changed" data-against="{key}">{heading}</h3>'
                       + changed_table(machine, part["described"]["changed"]) + work_html(part["described"]))
        elif part.get("step") and part["described"]["work"] is not None:
            where = " since the previous measured commit" if key == "previous" else " since the newest release"
            out.append(f'<div data-against="{key}">{work_html(part["described"], where)}</div>')
    out.append(unseen_html(any((told.get(key) or {}).get("step") and told[key]["described"]["work"] is not None
                               for key in ("previous", "release"))))
    if opened:
        out.append('<h3>Open regressions on main</h3><ul class="open">' + "".join(
            f'<li data-case="{esc(c["name"])}" data-head="{esc(s["head"])}">'
            f'{case_html(machine, c["name"])} {ratio_text(c)} at {commit_link(s["base"], known)} → '
            f'{commit_link(s["head"], known)}: {esc(summary.status(c))}</li>' for s, c in opened) + "</ul>")
    if rows:
        out.append(f'<h3>Each operation at {esc(head["name"])}</h3>')
        out.append(render(rows))
    out.append("</section>")
    return "\n".join(out)


def cell_title(cell, row, usual):
    """What a cell says on hover: the median's place, net of the floor, the paired step, over C++."""
    lines = [f"asv's median at {row['commit'][:9]}: {fmt(cell['value'])} per call (one unpaired run: context)"]
    if number(cell.get("net")):
        lines.append(f"net of the harness floor ({fmt(row['floor'])}): {fmt_net(cell['net'])}")
    step = cell.get("step")
    if step:
        said = {"regression": "slower", "improvement": "faster"}.get(step["verdict"], step["verdict"])
        lines.append(f"paired with {step['base'][:9]}: {interval(step)} ({CONFIDENCE:.0%}), {said}"
                     + (f"; {step['standing']}" if step.get("standing") else ""))
    if cell.get("index"):
        product, base, count = cell["index"]
        lines.append(f"paired chain ×{product:.3f} since {base[:9]} ({count} step{'s' if count != 1 else ''})")
    if cell.get("work"):
        lines.append(f"work per call, counted: {cell['work']}")
    if "over_cpp_ns" in cell:
        over = cell.get("over_cpp")
        text = f"over its C++ twin: {overcpp.over_text(cell, usual)} ({cell.get('over_cpp_of', 'raw')})"
        if over:
            state = (f", over the {over['fast']} of {over['processes']} processes in the fast state"
                     if over.get("fast") is not None else "")
            text += (f"; paired in one process{state}: ×{over['low']:.2f}–{over['high']:.2f}, "
                     f"{signed(over['over_low'] * 1e-9)} to {signed(over['over_high'] * 1e-9)} ({CONFIDENCE:.0%})")
            runs = over.get("runs")
            if runs and runs["runs"] > 1:
                text += (f"; ×{runs['low']:.2f}–{runs['high']:.2f} over {runs['runs']} runs of this commit "
                         f"(the records name {runs['starts']} machine starts)")
            if runs and runs.get("left_out"):
                text += (f"; {runs['left_out']} run(s) in the slow state left out (their C++ twins ran more than "
                         f"×{overcpp.SLOW_STATE} slower than their fastest recorded run)")
            if overcpp.slow_state(runs):
                text += (f" (⚠ its C++ twins ran ×{overcpp.slow_state(runs):.3f} slower than their fastest recorded "
                         "run on this machine: probably no process in the fast state, so the ratio reads high)")
            if number(over.get("py_ns")) and over["py_ns"] > 0:
                apart = cell["value"] * 1e9 / over["py_ns"]
                python = fmt(over["py_ns"] * 1e-9)
                text += (f". Measured apart from asv's median above: that is ×{apart:.2f} this "
                         f"measurement's Python time per call ({python}); another run, in another "
                         "state of the machine")
            else:
                text += (". Measured apart from the median above, in the fast state: the two need "
                         "not agree")
        lines.append(text + f"; ✓ under cuda-python's target of {fmt(TARGET_NS * 1e-9)} over C++ (#1580), ✗ above")
    return "\n".join(lines)


def add_work(rows, work):
    """Each Python cell of ``rows`` gets ``work``: its case's work per call at the row's commit, in a line, where
    that commit was counted (``work``: {machine: {commit: counts record}}, ``history.work``)."""
    for row in rows:
        counted = summary.counted_at(work.get(row["machine"], {}).get(row["commit"]))
        if counted is None:
            continue
        cases = {c["name"]: c for c in counted["cases"]}
        for cell in row["cells"].values():
            found = cases.get(cell.get("case"))  # Python cells only: the C++ twin's cell names no case
            if found:
                cell["work"] = counting.work_line(found)


def render(rows):
    """The operations table of each machine in ``rows`` (``overview.overview_rows``): one number per cell, asv's
    median, with a badge where the paired step to the commit flagged the case; the rest on hover (``title``), a
    click opens the case's graph. ★ marks an operation whose sides do different work, said once below."""
    out = []
    for machine in dict.fromkeys(r["machine"] for r in rows):
        mrows = [r for r in rows if r["machine"] == machine]
        first = mrows[0]
        floor = first["floor"]
        usual = overcpp.usual_runs(mrows)
        out.append(f'<p class="legend-line">Median time per call (asv); harness floor <span class="floor">'
                   f'{fmt(floor) if number(floor) else "n/a"}</span>. <span class="label label-danger">slower'
                   '</span> <span class="label label-success">faster</span>: the paired step to this commit says so. '
                   'Hover a number for its interval and its cost over C++; click it for its graph.</p>')
        out.append(f'<table class="table table-condensed table-hover overview" data-machine="{esc(machine)}">'
                   '<thead><tr><th>operation</th>' + "".join(f"<th>{TITLES[a]}</th>" for a in APIS)
                   + "</tr></thead><tbody>")
        reasons = {}
        for row in mrows:
            star = ""
            if row.get("differs"):
                mark = reasons.setdefault(row["differs"], "★" if not reasons else f"★{len(reasons) + 1}")
                star = f' <span class="differs" title="{esc(row["differs"])}">{mark}</span>'
            case = " ".join(row["case"])
            named = [row["cells"][api]["case"] for api in APIS
                     if (row["cells"].get(api) or {}).get("case")]
            uses = [n for name in named for n in calls.of(name)]
            out.append(f'<tr data-benchmark="{esc(row["benchmark"])}" data-case="{esc(case)}"><td>'
                       f'{esc(short_name(row["benchmark"]))}{" " + esc(case) if case else ""}{star}'
                       f'{"<br>" + calls_html(list(dict.fromkeys(uses))) if uses else ""}</td>')
            for api in APIS:
                cell = row["cells"].get(api)
                if cell is None:
                    out.append("<td></td>")
                    continue
                value = cell["value"]
                link = graph_href(machine, row["benchmark"], row["case"])
                if not number(value):
                    text = "failed" if value is None else "n/a"
                    out.append(f'<td class="{api}" data-value=""><a href="{esc(link)}">{text}</a></td>')
                    continue
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
                out.append(f'<td class="{api}{target}" data-value="{value!r}"{data_net} data-verdict="{verdict}" '
                           f'title="{esc(cell_title(cell, row, usual))}"><a href="{esc(link)}">{fmt(value)}</a>'
                           f'{badge}</td>')
            out.append("</tr>")
        out.append("</tbody></table>")
        if reasons:
            out.append('<ul class="differs-notes">' + "".join(
                f'<li><span class="differs">{mark}</span> the sides do different work: {esc(reason)}</li>'
                for reason, mark in reasons.items()) + "</ul>")
        if first.get("older"):
            out.append(f'<p class="older">{esc(OLDER.format(names=", ".join(first["older"])))}</p>')
    return "\n".join(out)


# --- releases -----------------------------------------------------------------------------------------
def geomean_text(found):
    parts = []
    for api in ("core", "bindings", "cupy", "cpp"):
        if api in found:
            value, n = found[api]
            parts.append(f'<span class="gm gm-{api}" data-api="{api}" data-value="{value!r}" data-cases="{n}">'
                         f'{TITLES[api]} ×{value:.3f} <small>({n})</small></span>')
    return " · ".join(parts)


def render_release_step(machine, told, known):
    body = [f'<section class="release-step" data-base="{esc(told["base"])}" data-head="{esc(told["head"])}" '
            f'data-kind="{esc(told["kind"])}"><h3>{commit_link(told["base"], known)} → '
            f'{commit_link(told["head"], known)}'
            f' {verdict_badge(told["counts"])}</h3>',
            environment_html(told),
            f'<p>{counts_text(told["counts"])}. Geometric mean of the ratios, per library (cases): '
            f'{geomean_text(told["geomean"])}. <small class="text-muted">Paired {esc(told["step"]["date"][:10])}, '
            f'each side with cuda-bindings {esc(bindings_words(told["step"]))}.</small></p>',
            across_html(told), one_side_html(machine, told["step"]),
            changed_table(machine, told["changed"]), put_down_html(machine, told), work_html(told)]
    if told["not_reproduced"]:
        body.append('<p class="text-muted not-reproduced">Not reproduced: '
                    + ", ".join(f'<span data-case="{esc(c["name"])}">'
                                f'{case_html(machine, c["name"])} flagged {ratio_text(c)}, '
                                f"{esc(cleared_text(c))}</span>" for c in told["not_reproduced"])
                    + "</p>")
    body.append("</section>")
    return "\n".join(body)


def bindings_words(step):
    """Which cuda-bindings each side of a step ran: "13.3.1", "12.9.10 → 13.3.1", "built from each commit"."""
    versions = step.get("versions") or {}
    base, head = ((versions.get(side) or {}).get("cuda-bindings") for side in ("base", "head"))
    if step.get("bindings") == "source":
        return "built from each commit" + (f" ({base} → {head})" if base and head and base != head else "")
    if base and head:
        return base if base == head else f"{base} → {head}"
    return step.get("bindings", "")


def environment_html(told):
    """The headline of a step whose environment changed between its sides (``history.environment_change``)."""
    if not told.get("environment"):
        return ""
    words = ", ".join(f"{package} {base} → {head}" for package, (base, head) in told["environment"].items())
    return (f'<p class="environment alert alert-warning"><b>The environment changed too: {esc(words)}.</b> Each side '
            "ran the wheels named here, not built from these commits: the cuda.bindings rows are put down to that "
            "change, listed apart and not counted as this step's; the other libraries' rows may carry some of it "
            "too.</p>")


def across_html(told):
    """Beside a release step with one cuda-bindings on both sides: the same commits paired across the
    cuda-bindings change, each with the wheel its release pinned (context; the verdicts are the step's own)."""
    other = told.get("across")
    if not other:
        return ""
    return (f'<p class="across">Across {esc(summary.environment_words(other["step"]))} (each release with the '
            f"wheel it pinned) the same commits read {counts_text(other['counts'])}. The verdicts here are "
            f"of cuda-bindings {esc(bindings_words(told['step']))} on both sides: the release's own change.</p>")


def put_down_html(machine, told):
    changed = [c for c in told.get("put_down") or [] if c["verdict"] in summary.CHANGES]
    if not changed:
        return ""
    return (f'<h4 class="put-down">Changed with {esc(summary.environment_words(told["step"]))}</h4>'
            + changed_table(machine, changed, kind="put-down"))


def render_releases(machine, found, known):
    out = [f'<section class="machine" data-machine="{esc(machine)}"><h2>{esc(machine)}</h2>']
    newest, head = found["newest"], found["head"]
    if newest and head:
        if found["to_head"]:
            out.append(render_release_step(machine, found["to_head"], known))
        else:
            out.append(f'<section class="release-step missing" data-base="{esc(newest)}" data-head="{esc(head)}"><h3>'
                       f'{commit_link(newest, known)} → main\'s head {commit_link(head, known)}</h3><p><b>Not measured '
                       f'yet</b>: the history has no paired step from {esc(summary.name(newest, known))} to main\'s '
                       "head. <code>cuda-bench ladder</code> on a GPU machine measures every release, then main's "
                       "head, and pairs each with the one before it.</p></section>")
    if not found["ladder"]:
        out.append("<p>No release measured against the one before it on this machine.</p>")
    out += [render_release_step(machine, told, known) for told in found["ladder"]]
    told = [*found["ladder"], *([found["to_head"]] if found["to_head"] else [])]
    out.append(unseen_html(any(t.get("work") is not None for t in told)))
    out.append("</section>")
    return "\n".join(out)


RELEASES = f"""<p>Each cuda-core release against the one before it, newest first: both built on this machine,
each with the cuda-bindings it supports, timed in turn on one core. The cases that changed are listed slower
first, each with its ratio (newer over older) and {CONFIDENCE:.0%} interval; the geometric mean of every case's
ratio per library sums a step up. {rule_html()}
(<a href="{METHOD}">how the engine decides</a>).</p>"""


# --- regressions ----------------------------------------------------------------------------------------
KIND_WORDS = {"main": "main", "release": "between releases", "since release": "since a release"}


def render_regressions(machine, found, known):
    """One machine's flags: the open ones on main, since the newest release and between releases, then those another
    machine start did not reproduce; each with its ratio, interval, status and the commits by name."""
    out = [f'<section class="machine" data-machine="{esc(machine)}"><h2>{esc(machine)}</h2>']
    groups = [("open", "main", "Open on main"), ("open", "since release", "Open since the newest release"),
              ("open", "release", "Open between releases"), ("not reproduced", None, "Not reproduced")]
    for table, kind, title in groups:
        verdict = "regression" if table == "open" else "not reproduced"
        chosen = [(s, c, k) for s, c, k in found if c["verdict"] == verdict and kind in (None, k)]
        if not chosen and kind != "main":
            continue
        note = (' <small>another machine start measured it without a flag</small>' if table != "open" else "")
        out.append(f'<h3>{title} <small>({len(chosen)})</small>{note}</h3>')
        if not chosen:
            out.append("<p>None.</p>")
            continue
        ratio = "flag's ratio" if table != "open" else "ratio"
        out.append(f'<table class="table table-condensed regressions" data-table="{table}"><thead><tr>'
                   f"<th>case</th><th>where</th><th>{ratio} [{CONFIDENCE:.0%} interval]</th>"
                   f"<th>status</th><th>threshold</th><th>{esc(PER_CALL)}</th><th>measured</th>"
                   "</tr></thead><tbody>")
        for step, case, kind_of in chosen:
            state = summary.status(case)
            note = standing(case, step.get("versions"))
            why = cleared_text(case) if case["verdict"] == "not reproduced" else note
            runs = case.get("measurements") or [case]
            starts = len({m.get("start") for m in runs})
            out.append(f'<tr class="case" id="{esc(anchor(machine, step, case))}" data-case="{esc(case["name"])}" '
                       f'data-base="{esc(step["base"])}" data-head="{esc(step["head"])}" data-kind="{kind_of}" '
                       f'data-ratio="{case["ratio"]!r}" data-low="{case["low"]!r}" data-high="{case["high"]!r}" '
                       f'data-status="{esc(state)}"><td>{case_html(machine, case["name"])}</td>'
                       f'<td>{commit_link(step["base"], known)} → '
                       f'{commit_link(step["head"], known)}</td><td>{ratio_text(case)}</td>'
                       f'<td class="text-{STATUS_CLASS[state]}"><b>{esc(state)}</b><br>'
                       f'<small class="why">{esc(why)}</small></td>'
                       f'<td>{case["threshold"]:.1%}</td><td class="per-call">{esc(per_call(case))}'
                       f'</td><td title="{esc(measurements(case))}">{len(runs)} time{"s" if len(runs) != 1 else ""}, '
                       f'{starts} machine start{"s" if starts != 1 else ""}</td></tr>')
        out.append("</tbody></table>")
    out.append("</section>")
    return "\n".join(out)


def anchor(machine, step, case):
    return f"{machine}-{step['base'][:9]}-{step['head'][:9]}-{case['name']}"


REGRESSIONS = f"""<p>Every case a paired step flagged slower: the whole {CONFIDENCE:.0%} interval of its ratio (head
over base) lies above 1 + its threshold. {rule_html()} (<code>cuda-bench steps --recheck</code>
measures a flag not yet confirmed again). Each status says why it stands so; a flag not reproduced
shows its own ratio and what cleared it. Cases the engine calls the same are never listed. Also as a
feed: <a href="regressions.xml">regressions.xml</a>.</p>"""


# --- steps --------------------------------------------------------------------------------------------
def gaps_html(machine, gaps, known):
    """The pairs of measured commits the history has no step between (``history.missing_steps``), each with the
    command that makes it: where a case's chain starts again."""
    if not gaps:
        return ""
    items = "".join(f'<li class="gap" data-base="{esc(base)}" data-head="{esc(head)}">{commit_link(base, known)} → '
                    f'{commit_link(head, known)} <small class="text-muted">(cuda-bindings {esc(bindings)})</small>'
                    "</li>" for bindings, base, head in gaps)
    many = len(gaps) != 1
    return (f'<div class="gaps alert alert-warning" data-machine="{esc(machine)}"><b>{len(gaps)} measured '
            f'commit{"s" if many else ""} not yet paired with the one before:</b> each chain starts again there. '
            f"<code>cuda-bench steps</code> on a GPU machine measures {'them' if many else 'it'} "
            f"(<code>cuda-bench plan</code> lists what the history lacks).<ul>{items}</ul></div>")


def render_steps(steps_by_machine, known=None, work=None, gaps=None):
    """The Steps page: each machine's paired steps, newest first, with the cases each judged and, where both
    commits were counted (``work``: {machine: {commit: counts record}}), the cases whose work per call changed; the
    measured commits not yet paired (``gaps``: {machine: [(bindings, base, head)]}) first."""
    known, work, gaps = known or {}, work or {}, gaps or {}
    out = []
    for machine, steps in steps_by_machine.items():
        if not steps and not gaps.get(machine):
            continue
        out.append(f"<h2>{esc(machine)}</h2>")
        out.append(gaps_html(machine, gaps.get(machine), known))
        out.append('<table class="table table-condensed steps" data-machine="' + esc(machine) + '"><thead><tr>'
                   "<th>base → head</th><th>date</th>"
                   + "".join(f"<th>{esc(w)}</th>" for _, w in STEP_COUNTS)
                   + "<th>pairs</th><th>seconds</th></tr></thead><tbody>")
        kinds = {(s["base"], s["head"]): summary.step_kind(s, known) for s in steps}
        main = [step for step in steps if kinds[(step["base"], step["head"])] != "release"]
        ladder = [step for step in steps if kinds[(step["base"], step["head"])] == "release"]
        for group, title in ((main, "main's history" if ladder else ""),
                             (ladder, "between cuda-core releases")):
            if group and title:
                out.append(f'<tr class="group"><th {ALL}>{esc(title)}</th></tr>')
            for step in newest_first(group, known):
                counted = summary.counted(step)
                count = {v: [c for c in counted if c["verdict"] == v]
                         for v in ("regression", "improvement", "not reproduced")}
                found = summary.counts(step)
                rechecked = "".join(f'<br><small>measured again {esc((r.get("date") or "")[:16])}</small>'
                                    for r in step.get("rechecks", []))
                built = summary.built_from_words(step)
                built = f'<br><small class="built-from">{esc(built)}</small>' if built else ""
                ends = f'data-base="{esc(step["base"])}" data-head="{esc(step["head"])}"'
                if history.identical(step):
                    out.append(f'<tr class="identical" {ends}><td>'
                               f'{commit_link(step["base"], known)} → {commit_link(step["head"], known)}{built}</td>'
                               f'<td>{esc(step.get("date", "")[:16])}</td><td {WIDE}>identical '
                               "builds: nothing to measure (both sides build the same wheels)"
                               "</td></tr>")
                    continue
                out.append(f'<tr {ends}><td>'
                           f'{commit_link(step["base"], known)} → {commit_link(step["head"], known)}{built}</td>'
                           f'<td>{esc(step.get("date", "")[:16])}{rechecked}</td>'
                           + "".join(f'<td data-count="{key}">{found[key]}</td>'
                                     for key, _ in STEP_COUNTS)
                           + f'<td>{esc(step.get("settings", {}).get("pairs", ""))}</td>'
                           f'<td>{step.get("seconds", 0):.0f}</td></tr>')
                if found["one side"]:
                    out.append(f'<tr class="one-side"><td colspan="2"></td><td {WIDE}>'
                               f"{one_side_html(machine, step)}</td></tr>")
                if history.environment_change(step):
                    changed = [c for c in summary.put_down(step) if c["verdict"] in summary.CHANGES]
                    out.append(f'<tr class="warning environment"><td {ALL}>the environment changed '
                               f'too: {esc(summary.environment_words(step))}; {len(changed)} '
                               'cuda.bindings case'
                               f'{"s" if len(changed) != 1 else ""} changed with it, not counted as this step\'s'
                               + "".join(f'<br><code>{esc(c["name"])}</code> {esc(interval(c))}' for c in changed)
                               + "</td></tr>")
                for verdict in ("regression", "not reproduced", "improvement"):
                    for case in count[verdict]:
                        kind = {"regression": "danger", "not reproduced": "warning"}.get(verdict, "success")
                        said = f" ({standing(case, step.get('versions'))})" if verdict == "regression" else ""
                        said += f" ({cleared_text(case)})" if verdict == "not reproduced" else ""
                        word = {"regression": "slower", "improvement": "faster"}.get(verdict, verdict)
                        text = (f"{word}{said}: {measurements(case)}, threshold "
                                f"{case['threshold']:.1%}; {PER_CALL}: {per_call(case)}")
                        out.append(step_case_row(case["name"], f"{kind} case",
                                                 f'data-verdict="{esc(verdict)}"', text))
                for name, text in sorted((step.get("errors") or {}).items()):
                    out.append(step_case_row(name, "active case", 'data-verdict="not measured"',
                                             f"not measured: {last_line(text)}"))
                changed = (summary.work_changed(step, work.get(machine)) or {}).get("changed", {})
                for name, text in changed.items():
                    out.append(step_case_row(name, "case work", 'data-work="1"',
                                             f"work per call: {text}"))
                for name, text in sorted((step.get("lost") or {}).items()):
                    out.append(step_case_row(name, "info case", 'data-lost="1"',
                                             f"measured from fewer process pairs: {text}"))
        out.append("</tbody></table>")
    return "\n".join(out) or "<p>No paired steps yet: <code>cuda-bench run</code> records one for every newly " \
                             "measured commit that has a measured predecessor on the same machine.</p>"


STEP_COUNTS = summary.COUNT_WORDS  # the Steps page's count columns
STEP_COLUMNS = 2 + len(STEP_COUNTS) + 2  # base → head, date; the counts; pairs, seconds
ALL, WIDE = f'colspan="{STEP_COLUMNS}"', f'colspan="{STEP_COLUMNS - 2}"'


def step_case_row(name, kind, data, text):
    """A row of the Steps page about one case: its ``kind`` (classes) and ``data`` attributes, the
    case by its name and what it uses (:func:`code_html`), and ``text`` (escaped here)."""
    return (f'<tr class="{kind}" data-case="{esc(name)}" {data}><td colspan="2">{code_html(name)}'
            f"</td><td {WIDE}>{esc(text)}</td></tr>")


def newest_first(steps, known):
    """Steps by their head's place in the history, newest first; where commits.json does not place them, the step
    made last first."""
    def key(found):
        i, step = found
        return (*summary.place(step["head"], known)[:2], i)

    return [step for _, step in sorted(enumerate(steps), key=key, reverse=True)]


STEPS = f"""<p>Every paired step of the history, newest first: a newly measured commit against the previous measured
one on the same machine (then the release ladder's steps, each release against the one before). Both builds run
in turn on one core, process pair after process pair; a case's ratio is the median over the pairs, with a
{CONFIDENCE:.0%} interval. <b>Slower</b> or <b>faster</b> needs the whole interval beyond the case's threshold.
Each measurement of a flag is listed with the machine start (boot) it ran on. The C++ twins and the harness
floor do not run cuda-python code and never count (<a href="{METHOD}">the method</a>).</p>"""


# --- graphs ---------------------------------------------------------------------------------------------
GRAPH = f"""<div class="graph-controls"><label>machine <select id="machine"></select></label>
<label>operation <select id="benchmark"></select></label> <label>case <select id="case"></select></label></div>
<div id="graph-legend"></div>
<h3 class="plot-title">Paired chain: time per call relative to the first commit of each paired run
<small>(product of the paired steps' ratios; band: the products of their {CONFIDENCE:.0%} interval ends;
▲ slower, ▼ faster where a step flagged it, ○ not reproduced)</small></h3>
<div id="chain" class="plot"></div>
<h3 class="plot-title">asv's medians per call <small>(one unpaired run per commit: context, not a verdict; they
move with the machine's state)</small></h3>
<div id="medians" class="plot"></div>
<div id="graph-notes"></div>
<table class="table table-condensed" id="graph-commits"></table>
<script src="vendor/jquery/dist/jquery.min.js"></script>
<script src="vendor/flot/jquery.flot.js"></script>
<script src="vendor/flot/jquery.flot.fillbetween.js"></script>
<script src="vendor/flot/jquery.flot.symbol.js"></script>
<script src="graph.js"></script>"""


GLOSSARY = f"""<p>Each in one line; the rules behind them, with their evidence, are in
<a href="{METHOD}">docs/method.md</a>, whose section Words holds the same list.</p>"""


def graph_data(machine, runs_of, steps, suite, known):
    """{benchmark: the graph page's data} of one machine: the commits on the x axis (history order, each with its
    name and cuda-bindings environment) and per case and library the paired chain (with its band and where it
    starts), the flags, and asv's medians; the C++ twin's medians where it has one."""
    newest = {}
    for data in runs_of:  # of a commit measured in several environments, the run measured last
        newest[data["commit_hash"]] = data
    commits = summary.order(newest, known)
    at = {c: i for i, c in enumerate(commits)}
    chains = summary.chains(steps, commits)
    flagged = summary.flags(steps, known)
    values = {c: results.values(newest[c]) for c in commits}
    axis = [{"hash": c, "name": summary.name(c, known), "tag": summary.tag(c, known) or "",
             "title": (known.get(c) or {}).get("title", ""), "date": (known.get(c) or {}).get("date"),
             "env": (newest[c].get("env_vars") or {}).get("CUDA_BENCH_BINDINGS", "")} for c in commits]
    out = {}
    for benchmark, info in suite.items():
        if benchmark in (CPP, HARNESS) or not benchmark.split(".")[-1].startswith("time_") or not info.get("params"):
            continue
        params = info["params"]
        apis = [a.strip("'") for a in params[0]]
        cases = [tuple(c) for c in itertools.product(*params[1:])] if len(params) > 1 else [()]
        series = {}
        for case in cases:
            label = " ".join(c.strip("'") for c in case)
            per = {}
            for api in apis:
                full = case_name(benchmark, (f"'{api}'", *case))
                chain = chains.get(full, {})
                median = [[at[c], values[c].get((benchmark, (f"'{api}'", *case)))] for c in commits]
                median = [p for p in median if number(p[1])]
                if not chain and not median:
                    continue
                points = [[at[c], *chain[c][:3], summary.name(chain[c][3], known)] for c in commits if c in chain]
                marks = [[at[s["head"]], c["verdict"], summary.status(c), c["ratio"], c["low"], c["high"],
                          summary.name(s["base"], known), summary.name(s["head"], known)]
                         for s, c, _ in flagged.get(full, []) if s["head"] in at]
                per[api] = {"chain": points, "median": median, "flags": marks}
            twin = cpp_id(benchmark, ("'x'", *case))
            cpp = [[at[c], values[c].get((CPP, (f"'{twin}'",)))] for c in commits]
            cpp = [p for p in cpp if number(p[1])]
            if cpp:
                per["cpp"] = {"chain": [], "median": cpp, "flags": [], "twin": twin}
            if per:
                series[label] = per
        if series:
            out[benchmark] = {"machine": machine, "benchmark": benchmark, "short": short_name(benchmark),
                              "param_names": info.get("param_names", [])[1:], "commits": axis, "cases": series}
    return out


def data_script(name, data):
    """A file of the graph page's data: a script that hands ``data`` to graph.js as ``name``, not a
    JSON file, since browsers run scripts but refuse to fetch files for a page opened from disk
    (``file://``). JSON is a script's literal, and what it holds stays inside its strings
    (``json.dumps`` escapes quotes, and U+2028)."""
    return f"cudaBenchData({json.dumps(name)},\n{json.dumps(data, separators=(',', ':'))});\n"


def write_graphs(html_dir, graphs_by_machine):
    """paired/<machine>/<operation>.js, one per graph (:func:`graph_data`), and paired/index.js, the
    operations and cases of each machine: graph.js loads them by their names,
    ``<machine>/<operation>`` and ``index``."""
    folder = html_dir / "paired"
    index = {}
    for machine, graphs in graphs_by_machine.items():
        (folder / machine).mkdir(parents=True, exist_ok=True)
        for benchmark, data in graphs.items():
            script = data_script(f"{machine}/{benchmark}", data)
            (folder / machine / f"{benchmark}.js").write_text(script)
        index[machine] = [[b, d["short"], list(d["cases"])] for b, d in sorted(graphs.items())]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.js").write_text(data_script("index", index))


# --- asv's own pages, fed by the paired steps --------------------------------------------------------------
def newest_flags(steps, known, commits_order):
    """{case: (step, case record)}: of every step that judged the case slower or faster, the one whose head comes
    last in the history (a "not reproduced" flag is no change)."""
    at = {c: i for i, c in enumerate(commits_order)}
    out = {}
    for step in steps:
        for case in summary.counted(step):
            if case["verdict"] not in summary.CHANGES:
                continue
            key = (at.get(step["head"], -1), at.get(step["base"], -1))
            if case["name"] not in out or key >= out[case["name"]][0]:
                out[case["name"]] = (key, step, case)
    return {name: (step, case) for name, (_, step, case) in out.items()}


def paired_summaries(html_dir, runs, steps_by_machine, revisions, known):
    """asv's Benchmark list (the summary.json of each graph folder) says what the paired steps say: each case's
    value is its median at the machine's newest commit; its "change" is the newest paired step that judged it
    slower or faster (its ratio, interval and status, the commits by name), or none. asv's own step detection
    on unpaired medians never shows."""
    newest = {}
    for machine, data in runs:
        newest[machine] = data
    for path in (html_dir / "graphs").rglob("summary.json"):
        machine = next((p[len("machine-"):] for p in path.relative_to(html_dir).parts if p.startswith("machine-")),
                       None)
        rows = json.loads(path.read_text())
        if machine not in newest:
            continue
        values = results.values(newest[machine])
        head = newest[machine]["commit_hash"]
        measured = [d["commit_hash"] for m, d in runs if m == machine]
        flags = newest_flags(steps_by_machine.get(machine, []), known, summary.order(measured, known))
        for row in rows:
            benchmark, combo = split_case(row["pretty_name"]) if row["idx"] is not None else (row["name"], ())
            value = values.get((row["name"], combo))
            row.update(last_value=value if number(value) else None, last_err=None, prev_value=None,
                       change_rev=None, last_rev=revisions.get(head))
            found = flags.get(case_name(row["name"], combo))
            if found and row["last_value"] is not None and revisions.get(found[0]["head"]) is not None:
                step, case = found
                base_rev = revisions.get(step["base"])
                row.update(prev_value=row["last_value"] / case["ratio"], verdict=case["verdict"],
                           change_rev=[base_rev, revisions[step["head"]]],
                           paired=f"{ratio_text(case)} {summary.status_word(case)}",
                           paired_where=f"{summary.name(step['base'], known)} → {summary.name(step['head'], known)}")
        path.write_text(json.dumps(rows, separators=(",", ":")))


def asv_regressions(steps_by_machine, suite, revisions, html_dir):
    """asv's regressions.json entries for the open regressions of the paired steps: [name, graph, params, flat
    index, last, best, [[rev before, rev after, before, after]]]; before/after are the step's base median per
    call and that times the paired ratio, so asv's factor is the paired ratio. asv.html#regressions opens
    regressions.html, which shows their intervals and status."""
    entries = []
    graphs = {}
    for path in (html_dir / "graphs").rglob("*.json"):
        graphs.setdefault(path.stem, []).append(path.relative_to(html_dir).as_posix())
    for machine, steps in steps_by_machine.items():
        for step, case in history.flagged_steps(steps):
            before, after = revisions.get(step["base"]), revisions.get(step["head"])
            benchmark, combo = split_case(case["name"])
            info = suite.get(benchmark)
            if after is None or info is None:
                continue  # not in the published history: listed on regressions.html only
            combos = [tuple(map(str, c)) for c in itertools.product(*info.get("params", []))]
            idx = combos.index(combo) if combo in combos else None
            graph = next((g for g in graphs.get(benchmark, []) if f"/machine-{machine}/" in g), "")
            base_s = case["base_ns"] * 1e-9
            entries.append([case["name"], graph, {"machine": machine}, idx, base_s * case["ratio"], base_s,
                            [[before, after, base_s, base_s * case["ratio"]]]])
    return entries


def write_feed(html_dir, project, found_by_machine, known):
    """regressions.xml: one Atom entry per open regression (confirmed or not yet), with its interval and status
    and the commits by name; nothing the engine calls the same or did not reproduce."""
    from asv import feed

    entries = []
    for machine, found in found_by_machine.items():
        for step, case, kind in found:
            if case["verdict"] != "regression":
                continue
            where = f"{summary.name(step['base'], known)} → {summary.name(step['head'], known)}"
            title = f"{ratio_text(case)} {case['name']} at {where} ({summary.status(case)})"
            content = (f"<p>{esc(case['name'])} on {esc(machine)}: {ratio_text(case)} ({CONFIDENCE:.0%} interval), "
                       f"{esc(standing(case, step.get('versions')))}; {esc(KIND_WORDS[kind])}, {esc(where)}; "
                       f"{esc(PER_CALL)}: {esc(per_call(case))}.</p>")
            date = datetime.strptime(step["date"][:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
            entries.append(feed.FeedEntry(title, date, f"regressions.html#{quote(anchor(machine, step, case))}",
                                          content, [machine, case["name"], step["base"], step["head"]], date))
    entries.sort(key=lambda e: e.updated, reverse=True)
    feed.write_atom(str(html_dir / "regressions.xml"), entries, title=f"{project} performance regressions",
                    author="cuda-python-bench", address=f"{project}.cuda-python-bench")


# --- the whole site -----------------------------------------------------------------------------------------
def finish(conf, results_dir, html_dir):
    """Make asv's published ``html_dir`` the project's site (``conf``: asv's config, for the project's name):
    self-contained, asv's app at asv.html, the project's pages, and asv's list, regressions and feed fed by the
    paired steps. Returns (operation rows, asv regressions entries)."""
    html_dir, results_dir = Path(html_dir), Path(results_dir)
    vendor(html_dir)
    asv_app(html_dir)
    results.forget(results_dir)  # what this publish cannot read, noted afresh as it reads
    known = results.commits(results_dir)
    index = json.loads((html_dir / "index.json").read_text())
    revisions = {commit: int(rev) for rev, commit in index.get("revision_to_hash", {}).items()}
    runs = results.load_all(results_dir)
    machines = list(dict.fromkeys(m for m, _ in runs))
    steps = {m: history.steps(results_dir, m) for m in machines}
    suite = results.suite(results_dir)
    rows = overview.rows_of(results_dir, runs, steps, known)
    work = {m: history.work(results_dir, m) for m in machines}
    banner = unreadable_html(results.noted(results_dir), results_dir)  # all read by now
    add_work(rows, work)
    (html_dir / "overview.json").write_text(json.dumps(rows, indent=1))
    by_machine = {m: [d for n, d in runs if n == m] for m in machines}
    order = overview.machine_order(by_machine)
    told = {m: summary.landing(m, by_machine[m], steps[m], known, work[m],
                               results.unreadable_results(results_dir, m, known)) for m in order}
    (html_dir / "index.html").write_text(page(
        "cuda-python: is main fine?", HOW_TO_READ + "\n".join(
            render_landing(told[m], [r for r in rows if r["machine"] == m], known) for m in order), "index.html",
        banner))
    found = {m: summary.releases(steps[m], known, (told[m]["head"] or {}).get("commit"), work[m]) for m in order}
    (html_dir / "releases.html").write_text(page(
        "cuda-core releases, each against the one before",
        RELEASES + "\n".join(render_releases(m, found[m], known) for m in order), "releases.html", banner))
    flagged = {m: summary.regressions(steps[m], known) for m in order}
    (html_dir / "regressions.html").write_text(page("Regressions", REGRESSIONS + "\n".join(
        render_regressions(m, flagged[m], known) for m in order), "regressions.html", banner))
    gaps = {m: [(bindings, base, head) for bindings, pairs in history.missing_steps(results_dir, m).items()
                for base, head in pairs] for m in machines}
    (html_dir / "steps.html").write_text(page("Paired steps", STEPS + render_steps(steps, known, work, gaps),
                                              "steps.html", banner))
    (html_dir / "graph.html").write_text(page("Graphs", GRAPH, "graph.html", banner))
    glossary = page("Words the pages use", GLOSSARY + words.glossary_html(), "glossary.html",
                    banner)
    (html_dir / "glossary.html").write_text(glossary)
    write_graphs(html_dir, {m: graph_data(m, by_machine[m], steps[m], suite, known) for m in order})
    paired_summaries(html_dir, runs, steps, revisions, known)
    entries = asv_regressions(steps, suite, revisions, html_dir)
    (html_dir / "regressions.json").write_text(json.dumps({"regressions": entries}, separators=(",", ":")))
    write_feed(html_dir, getattr(conf, "project", "cuda-python"), flagged, known)
    shutil.copy2(DASHBOARD / "html-README.md", html_dir / "README.md")
    return rows, entries


def clean_results(results_dir, work):
    """``results_dir`` itself, or, for asv, a copy in ``work`` without the results files that do not parse (each
    named in a line, and noted: ``results.bad_files``)."""
    bad = results.bad_files(results_dir)
    if not bad:
        return Path(results_dir)
    copy = Path(work) / "results"
    shutil.copytree(results_dir, copy)
    for path in bad:
        (copy / path.relative_to(results_dir)).unlink()
    if not results.load_all(copy):
        raise DashboardError(f"no readable results left in {results_dir}")
    return copy


def swap_in(new, html_dir, aside):
    """``new`` becomes ``html_dir``: the old one is moved to ``aside`` first and put back if the new one cannot
    take its place, so ``html_dir`` is never left missing."""
    had = html_dir.exists()
    if had:
        html_dir.rename(aside)
    try:
        new.rename(html_dir)
    except BaseException:
        if had:
            aside.rename(html_dir)
        raise


def publish(config=CONF):
    """Publish ``config``'s results into its html_dir: built aside (in .asv/, which git ignores), swapped in only
    when complete; a failure or an interrupt at any point leaves the old html_dir as it was."""
    import json5  # asv's own reader of its config (the file has comments)

    config = Path(config).resolve()
    conf = json5.loads(config.read_text())
    base = config.parent
    html_dir = (base / conf.get("html_dir", "html")).resolve()
    results_dir = (base / conf.get("results_dir", "results")).resolve()
    if not results.load_all(results_dir):
        raise DashboardError(f"no results in {results_dir} to publish (cuda-bench run makes some)")
    html_dir.parent.mkdir(parents=True, exist_ok=True)
    WORK.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="publish-", dir=WORK))
    temp_config = work / "asv.conf.json"  # in .asv/: nothing of a publish is left in the checkout, killed or not
    try:
        new_html = work / "html"
        used = clean_results(results_dir, work)
        conf.update(html_dir=str(new_html), results_dir=str(used))
        for key in ("env_dir", "benchmark_dir"):
            conf[key] = str((base / conf[key]).resolve())
        temp_config.write_text(json.dumps(conf))
        path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])  # the project's plugin
        proc = subprocess.run([sys.executable, "-m", "asv", "publish", "--config", str(temp_config)], cwd=base,
                              capture_output=True, text=True,
                              env=dict(os.environ, PYTHONPATH=path, **{ASV_PAGES_ONLY: "1"}))
        if proc.returncode != 0:
            lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
            said = lines[-1].strip() if lines else "no output"
            raise DashboardError(f"asv publish exited {proc.returncode} ({said}); {html_dir} is as it was")
        # the pages from the results themselves (the copy asv read lacks what could not be read: the pages name it)
        rows, entries = finish(argparse.Namespace(project=conf.get("project", "cuda-python")), results_dir,
                               new_html)
        swap_in(new_html, html_dir, work / "old")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"publish: {html_dir} ({len(rows)} operation rows, {len(entries)} open regressions from paired steps). "
          f"Open {html_dir / 'index.html'}; asv's pages (asv.html) need `cuda-bench serve` "
          "(http://127.0.0.1:8080): browsers refuse asv's data from file://", file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(CONF))
    args = parser.parse_args(argv)
    results.forget()
    try:
        publish(args.config)
    except DashboardError as exc:
        print(f"publish: {exc}", file=sys.stderr)
        return 3  # as every command that could not do its job (cuda_bench.cli); 1 means a regression
    return 2 if results.say_unreadable("publish") else 0  # 2: something could not be read (cuda_bench.cli)


if __name__ == "__main__":
    sys.exit(main())
