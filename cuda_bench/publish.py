"""Stage 5, publish: the static dashboard in ``html/``, self-contained, with what the paired steps flag.

    python -m cuda_bench.publish [--config asv.conf.json]     # scripts/bench publish

``asv publish`` writes asv's pages into a new folder next to ``html/``; only when every step below has
worked does that folder replace ``html/`` (a failed publish leaves the old dashboard and its README). A
results file that does not parse is left out with one line naming it; publishing fails only when nothing
is left.

* **Self-contained**: asv's pages load jQuery, flot, bootstrap, stupidtable and md5 from CDNs; the same
  libraries come from npm packages pinned in ``dashboard/package.json`` (``npm ci`` once, into
  ``dashboard/node_modules``) and are served from ``html/vendor/``. No request leaves ``html/``.
* **Readable graphs**: commits are evenly spaced by default (a handful of main commits are not squeezed
  against the right edge behind years of release tags) and the legend sits beside the plot, not on it.
* **Regressions from paired steps**: asv's Regressions page (``regressions.json``, ``regressions.xml``)
  lists what the history's paired steps flagged (``results/<machine>/steps.jsonl``), not asv's own step
  detection on unpaired medians, which on a noisy machine flags noise and misses real slowdowns.
* **Overview** (``overview.html``, linked from asv's navigation bar): one row per operation with the C++,
  cuda.bindings, cuda.core and CuPy medians at each machine's newest commit (GPU machines first), the paired
  step's verdict with its interval and the chained index beside each Python number; **Steps**
  (``steps.html``): every paired step of the history with its counts and the cases it flagged.
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
from pathlib import Path
from urllib.parse import quote

from cuda_bench import history, overcpp, overview, records, results
from cuda_bench.names import is_control, is_release_tag, short_name, split_case
from cuda_bench.overview import APIS, TITLES
from cuda_bench.report import OLDER
from cuda_bench.paths import CONF, DASHBOARD, WORK
from cuda_bench.stats import CONFIDENCE, VERDICTS
from cuda_bench.text import TARGET_NS, fmt, fmt_net, fmt_ns, interval, last_line, measurements, number, signed, standing

# the end of each CDN address asv's pages use -> the same library in an npm package (dashboard/package.json)
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
EXTRA_FILES = ["bootstrap/dist/fonts"]  # bootstrap.min.css loads ../fonts/glyphicons-*
TAG = re.compile(r'<(script|link)\b[^>]*?(?:src|href)="(https?://[^"]+)"[^>]*>(?:</script>)?')




class DashboardError(Exception):
    pass


# --- self-contained pages --------------------------------------------------------------------------
def node_modules():
    modules = DASHBOARD / "node_modules"
    if not all((modules / path).exists() for path in ASSETS.values()):
        if not shutil.which("npm"):
            raise DashboardError("npm is needed once to fetch the dashboard's libraries (dashboard/package.json)")
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=DASHBOARD, check=True)
    return modules


def vendor(html_dir):
    """Copy the libraries into html/vendor and point every page at them; no address outside html/ stays."""
    modules = node_modules()
    for path in [*ASSETS.values(), *EXTRA_FILES]:
        source, target = modules / path, html_dir / "vendor" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)

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


def add_nav_links(html_dir):
    patch(html_dir / "index.html", '<li id="nav-li-regressions">',
          '<li id="nav-li-overview"><a href="overview.html">Overview</a></li>\n\t'
          '<li id="nav-li-steps"><a href="steps.html">Steps</a></li>\n\t<li id="nav-li-regressions">')


LEGEND = '<div id="cuda-bench-legend" style="position: absolute; top: 48px; right: 0; width: 260px; bottom: 100px; overflow: auto"></div>'


def readable_graphs(html_dir):
    """Even commit spacing by default, and the legend in a column beside the plot."""
    patch(html_dir / "graphdisplay.js", "        if (params['x-axis-scale']) {",
          "        if (!params['x-axis-scale']) { params['x-axis-scale'] = ['even']; }  // cuda-python-bench\n"
          "        if (params['x-axis-scale']) {")
    patch(html_dir / "graphdisplay.js", 'position: "nw",',
          'position: "nw", container: $("#cuda-bench-legend"),  // cuda-python-bench: beside the plot')
    patch(html_dir / "index.html",
          '<div style="position: absolute; top: 48px; left: 0; right: 0; bottom: 100px;">',
          f'{LEGEND}\n          <div style="position: absolute; top: 48px; left: 0; right: 270px; bottom: 100px;">')


# --- the overview and the steps -------------------------------------------------------------------
def release_commits(index):
    """{commit hash: tag} for cuda-core release tags, from asv publish's index.json."""
    to_hash = index.get("revision_to_hash", {})
    return {to_hash[str(rev)]: tag for tag, rev in index.get("tags", {}).items()
            if is_release_tag(tag) and str(rev) in to_hash}


def graph_link(benchmark, machine, params):
    """asv's own address for one line of one graph: index.html#bench?machine=m&p-api='core'"""
    parts = [f"machine={quote(machine)}", *(f"p-{quote(k)}={quote(v)}" for k, v in params.items())]
    return f"index.html#{benchmark}?{'&'.join(parts)}"


def esc(text):
    return html.escape(str(text))


def step_note(cell):
    """The paired view of a cell: the newest step's ratio with its interval, and the chained index."""
    notes = []
    step = cell.get("step")
    if step:
        notes.append(f'<span class="step {esc(step["verdict"].replace(" ", "-"))}" title="paired with {esc(step["base"][:9])}: '
                     f'{CONFIDENCE:.0%} interval {step["low"]:.3f}–{step["high"]:.3f}">'
                     f'{interval(step)} vs prev.</span>')
    if cell.get("index"):
        product, base, count = cell["index"]
        notes.append(f'<span class="index" title="product of the paired ratios of {count} step(s)">'
                     f'index ×{product:.3f} since {esc(base[:9])}</span>')
    return notes


def render(rows):
    def pct(x):
        return "" if x is None else f"{x * 100:+.1f}%"

    out = []
    for machine in dict.fromkeys(r["machine"] for r in rows):
        mrows = [r for r in rows if r["machine"] == machine]
        first = mrows[0]
        params, floor = first["params"], first["floor"]
        release = first["release"] or "no earlier release in results"
        out.append(f'<h2>{esc(machine)} <small>commit {first["commit"][:9]}; previous release: {esc(release)}'
                   f'{"" if first["gpu"] else "; no GPU: GPU benchmarks skipped"}</small></h2>')
        out.append(f'<p class="machine">{esc(params.get("gpu", "no GPU"))}, driver {esc(params.get("driver", "-"))} '
                   f'(CUDA {esc(params.get("cuda_driver", "-"))}), {esc(params.get("cpu", ""))}; harness floor '
                   f'<span class="floor">{fmt(floor) if number(floor) else "n/a"}</span></p>')
        usual = overcpp.usual_runs(mrows)
        if usual:
            out.append(f'<p class="ranges">Over C++ (paired): the ratio of the run nearest the fast state and its '
                       f'range over this commit\'s {esc(overcpp.usual_runs_text(usual))} unless its cell names a '
                       f'count; hover over a cell for its {CONFIDENCE:.0%} interval and its runs.</p>')
        out.append('<table class="table table-condensed table-hover overview" '
                   f'data-machine="{esc(machine)}"><thead><tr><th>operation</th><th>case</th>'
                   + "".join(f"<th>{TITLES[a]}</th>" for a in APIS) + "</tr></thead><tbody>")
        for row in mrows:
            star = (f' <span class="differs" title="{esc(row["differs"])}">★</span>'
                     f'<br><small class="text-muted">{esc(row["differs"])}</small>') if row.get("differs") else ""
            out.append(f'<tr data-benchmark="{row["benchmark"]}" data-case="{esc(" ".join(row["case"]))}">'
                       f"<td>{short_name(row['benchmark'])}{star}</td><td>{esc(' '.join(row['case']))}</td>")
            for api in APIS:
                cell = row["cells"].get(api)
                if cell is None:
                    out.append("<td></td>")
                    continue
                value = cell["value"]
                link = graph_link(cell["benchmark"], machine, cell["params"])
                if not number(value):
                    text = "failed" if value is None else "n/a"
                    out.append(f'<td class="{api}" data-value=""><a href="{link}">{text}</a></td>')
                    continue
                net = cell.get("net")
                net_text = ""
                if number(net):
                    net_text = (f' <small class="net" title="measured − harness floor = {signed(net)}">'
                                f'net {esc(fmt_net(net))}</small>')
                notes = []
                if "over_cpp_ns" in cell:
                    over = cell.get("over_cpp")
                    runs = (over or {}).get("runs")
                    across = (f'; ×{runs["low"]:.2f}–{runs["high"]:.2f} over {runs["runs"]} runs of this commit '
                              f'(the records name {runs["starts"]} machine starts)' if runs and runs["runs"] > 1 else "")
                    state = (f', over the {over["fast"]} of {over["processes"]} processes in the fast state'
                             if over and over.get("fast") is not None else "")
                    if runs and runs.get("left_out"):
                        across += (f'; {runs["left_out"]} run(s) in the slow state left out (their C++ twins ran '
                                   f'more than ×{overcpp.SLOW_STATE} slower than their fastest recorded run)')
                    if overcpp.slow_state(runs):
                        state += (f' (⚠ its C++ twins ran ×{overcpp.slow_state(runs):.3f} slower than their fastest '
                                  f'recorded run on this machine: probably no process in the fast state, so the '
                                  f'ratio reads high)')
                    title = (f' title="paired in one process{state}: ×{over["low"]:.2f}–{over["high"]:.2f}, '
                             f'{signed(over["over_low"] * 1e-9)} to {signed(over["over_high"] * 1e-9)} ({CONFIDENCE:.0%})'
                             f'{across}"' if over else "")
                    target = "ok" if cell["over_cpp_ns"] < TARGET_NS else "over"
                    notes.append(f'<span class="target-{target}"{title}>{esc(overcpp.over_text(cell, usual))} C++ '
                                 f'({cell.get("over_cpp_of", "raw")})</span>')
                if cell.get("vs_commit") is not None:
                    notes.append(f'{pct(cell["vs_commit"])} vs prev. commit (unpaired)')
                if cell.get("vs_release") is not None:
                    notes.append(f'{pct(cell["vs_release"])} vs release (unpaired)')
                notes += step_note(cell)
                flag = (f' <span class="label label-danger" title="the paired step to this commit flags it: '
                        f'{esc(cell["step"]["standing"])}">regressed</span>') if cell.get("regression") else ""
                small = f'<br><small class="text-muted">{"; ".join(notes)}</small>' if notes else ""
                data_net = f' data-net="{net!r}"' if number(net) else ""
                out.append(f'<td class="{api}{" danger" if flag else ""}" data-value="{value!r}"{data_net}>'
                           f'<a href="{link}">{fmt(value)}</a>{net_text}{flag}{small}</td>')
            out.append("</tr>")
        out.append("</tbody></table>")
        if first.get("older"):
            out.append(f'<p class="older">{esc(OLDER.format(names=", ".join(first["older"])))}</p>')
    return "\n".join(out)


HEAD = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title><link rel="icon" href="swallow.ico">
<link rel="stylesheet" href="vendor/bootstrap/dist/css/bootstrap.min.css">
<style>body{{padding:1em}} td small{{font-size:75%}} .overview td{{white-space:nowrap}}
.step.regression{{color:#a94442;font-weight:bold}} .step.improvement{{color:#3c763d}}
.target-over{{color:#a94442}} .differs{{color:#8a6d3b}} .overview td small.text-muted{{white-space:normal}}</style></head>
<body><h1>{title} <small><a href="index.html">asv dashboard</a> · <a href="overview.html">overview</a> ·
<a href="steps.html">paired steps</a> · <a href="index.html#regressions">regressions</a></small></h1>
"""

OVERVIEW = f"""<p>Median time per call at each machine's newest commit, as asv measured it. Each Python number is
shown <b>raw</b> and <b>net</b> of the <b>harness floor</b> (<code>bench_harness.Floor.time_noop</code>: the same
timed body, the call written out many times per asv loop turn (<code>UNROLL</code> in <code>benchmarks/_op.py</code>), around <code>gc.isenabled()</code>, a C function that does nothing, in the
same run; a net below 0 is noise). C++ numbers (<code>benchmarks/cpp/twins.cpp</code>) time themselves, so they are
already net. Under each number, Python over C++: <b>paired</b> where <code>scripts/bench overhead</code> measured
this commit (the Python form and its C++ twin timed in turn, sample by sample, in one process; hover for the {CONFIDENCE:.0%}
interval; of several runs of the commit, the one nearest the fast state, and a run whose C++ twins ran more
than {overcpp.SLOW_STATE}× (the fast-state window) slower than their fastest recorded run is left out, or marked
⚠ where it is the only one: its ratios read high), else net minus C++ from asv's medians; ✓ under cuda-python's
target of {fmt(TARGET_NS * 1e-9)} over C++ (#1580), ✗ above.
<span class="differs">★</span> marks an operation whose sides do different work (on purpose, or because a library does), with the reason.</p>
<p>Medians taken seconds or processes apart move with this machine's state (up to 2× on the H200 VM), so
changes between commits are decided by <b>paired steps</b>: the newest commit and the previous measured one,
timed in turn sample by sample on one core (<a href="steps.html">every step</a>). Under a number: the step's
ratio with its {CONFIDENCE:.0%} interval, and the <b>chained index</b>, the product of the paired ratios since the first commit
the steps reach; <span class="label label-danger">regressed</span> marks a case whose whole interval lies beyond
its threshold. The "vs prev. commit / release" percentages compare unpaired medians: context, not verdicts.
Every cell links to its asv graph.</p>
"""


def render_steps(steps_by_machine):
    out = []
    for machine, steps in steps_by_machine.items():
        if not steps:
            continue
        out.append(f"<h2>{esc(machine)}</h2>")
        out.append('<table class="table table-condensed steps" data-machine="' + esc(machine) + '"><thead><tr>'
                   "<th>base → head</th><th>date</th><th>regressions</th><th>improvements</th><th>same</th>"
                   "<th>not reproduced</th><th>not measured</th><th>pairs</th><th>seconds</th></tr></thead><tbody>")
        main = [step for step in steps if not history.release_step(step)]
        ladder = [step for step in steps if history.release_step(step)]
        for group, title in ((main, "main's history" if ladder else ""),
                             (ladder, "between cuda-core releases: the release ladder's steps")):
            if group and title:
                out.append(f'<tr class="group"><th colspan="9">{esc(title)}</th></tr>')
            for step in reversed(group):
                counted = [c for c in step["cases"] if not is_control(c["name"])]
                count = {v: [c for c in counted if c["verdict"] == v] for v in VERDICTS}
                rechecked = "".join(f'<br><small>measured again {esc((r.get("date") or "")[:16])}</small>'
                                    for r in step.get("rechecks", []))
                out.append(f'<tr data-base="{step["base"]}" data-head="{step["head"]}"><td><code>{step["base"][:9]}</code>'
                           f' → <code>{step["head"][:9]}</code></td><td>{esc(step.get("date", "")[:16])}{rechecked}</td>'
                           + "".join(f"<td>{len(count[v])}</td>" for v in VERDICTS)
                           + f'<td>{len(step.get("errors") or {})}</td>'
                           f'<td>{step.get("settings", {}).get("pairs", "")}</td>'
                           f'<td>{step.get("seconds", 0):.0f}</td></tr>')
                for verdict in ("regression", "not reproduced", "improvement"):
                    for case in count[verdict]:
                        kind = {"regression": "danger", "not reproduced": "warning"}.get(verdict, "success")
                        said = f" ({standing(case, step.get('versions'))})" if verdict == "regression" else ""
                        out.append(f'<tr class="{kind} case" data-case="{esc(case["name"])}" '
                                   f'data-verdict="{esc(verdict)}"><td colspan="2"><code>{esc(case["name"])}</code></td>'
                                   f'<td colspan="7">{verdict}{esc(said)}: '
                                   f'{esc(measurements(case))}, threshold '
                                   f'{case["threshold"]:.1%}; {fmt_ns(case["base_ns"])} → '
                                   f'{fmt_ns(case["head_ns"])} per call</td></tr>')
                for name, text in sorted((step.get("errors") or {}).items()):
                    out.append(f'<tr class="active case" data-case="{esc(name)}" data-verdict="not measured"><td '
                               f'colspan="2"><code>{esc(name)}</code></td><td colspan="7">not measured: '
                               f'{esc(last_line(text))}</td></tr>')
                for name, text in sorted((step.get("lost") or {}).items()):
                    out.append(f'<tr class="info case" data-case="{esc(name)}" data-lost="1"><td colspan="2"><code>'
                               f'{esc(name)}</code></td><td colspan="7">measured from fewer process pairs: '
                               f'{esc(text)}</td></tr>')
        out.append("</tbody></table>")
    return "\n".join(out) or "<p>No paired steps yet: <code>scripts/bench run</code> records one for every newly " \
                             "measured commit that has a measured predecessor on the same machine.</p>"


STEPS = f"""<p>Every newly measured commit of the history, paired with the previous measured commit on the same
machine: two worker processes, one per build, pinned to one core, each with a memory layout of its own
(address-space randomisation on; steps measured before that had one layout per build), timed in
turn (A B B A) case by case; a case's ratio is the median over process pairs and its interval a {CONFIDENCE:.0%} confidence
interval of that median. A <b>regression</b> needs the whole interval above 1 + the case's threshold (from a paired
A/A calibration on the machine). C++ twins and the harness floor do not depend on cuda-python and never count.
A regression is <b>confirmed</b> once a second machine start flags it too, one of the two with a layout per
process (one fixed layout repeats on every start; <code>scripts/bench steps --recheck</code> measures the flagged
cases again); one that another start measured without a flag is <b>not reproduced</b> and
leaves the Regressions page: pairing cancels the machine's state within a start, not what a start fixes for its
whole length. The release ladder's steps (each cuda-core release against the previous one, each side with the
cuda-bindings it supports: <code>scripts/bench steps --bindings auto</code> after <code>scripts/bench ladder</code>)
follow main's history.</p>
"""


def asv_regressions(steps_by_machine, suite, revisions, html_dir):
    """asv's regressions.json entries for what the paired steps flagged: [name, graph, params, flat index,
    last, best, [[rev before, rev after, before, after]]]; before/after are the step's base median per call
    and that times the paired ratio, so asv's factor column shows the paired ratio."""
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
                continue  # not in the published history: listed on steps.html only
            combos = [tuple(map(str, c)) for c in itertools.product(*info.get("params", []))]
            idx = combos.index(combo) if combo in combos else None
            graph = next((g for g in graphs.get(benchmark, []) if f"/machine-{machine}/" in g), "")
            base_s = case["base_ns"] * 1e-9
            entries.append([case["name"], graph, {"machine": machine}, idx, base_s * case["ratio"], base_s,
                            [[before, after, base_s, base_s * case["ratio"]]]])
    return entries


def write_regressions(config, html_dir, entries, revisions):
    """regressions.json and asv's Atom feed (asv's own writer) from ``entries``."""
    (html_dir / "regressions.json").write_text(json.dumps({"regressions": entries}, separators=(",", ":")))
    feed = html_dir / "regressions.xml"
    try:
        from asv.benchmarks import Benchmarks
        from asv.config import Config
        from asv.plugins.regressions import Regressions

        conf = Config.load(str(config))
        conf.html_dir = str(html_dir)
        Regressions._save_feed(conf, Benchmarks.load(conf), entries, revisions,
                               {rev: commit for commit, rev in revisions.items()})
    except Exception as exc:  # the feed is a convenience; a stale one would contradict the page
        feed.unlink(missing_ok=True)
        print(f"publish: no regressions feed ({type(exc).__name__}: {exc})", file=sys.stderr)


def pages(config, results_dir, html_dir):
    """overview.html/.json, steps.html and the paired regressions, into a published ``html_dir``."""
    index = json.loads((html_dir / "index.json").read_text())
    revisions = {commit: int(rev) for rev, commit in index.get("revision_to_hash", {}).items()}
    runs = results.load_all(results_dir)
    machines = list(dict.fromkeys(m for m, _ in runs))
    steps = {m: history.steps(results_dir, m) for m in machines}
    suite = results.suite(results_dir)
    param_names = {name: b.get("param_names", []) for name, b in suite.items()}
    rows = overview.overview_rows(runs, steps, release_commits(index), param_names,
                                {m: records.read(Path(results_dir) / m, "over-cpp") for m in machines}, overview.suite_differs(),
                                {name: b.get("version") for name, b in suite.items()})
    (html_dir / "overview.json").write_text(json.dumps(rows, indent=1))
    title = "cuda-python: latency per call"
    (html_dir / "overview.html").write_text(HEAD.format(title=title) + OVERVIEW + render(rows) + "\n</body></html>\n")
    (html_dir / "steps.html").write_text(HEAD.format(title="cuda-python: paired steps") + STEPS
                                         + render_steps(steps) + "\n</body></html>\n")
    entries = asv_regressions(steps, suite, revisions, html_dir)
    write_regressions(config, html_dir, entries, revisions)
    return rows, entries


def clean_results(results_dir, work):
    """``results_dir`` itself, or a copy in ``work`` without the results files that do not parse."""
    bad = results.bad_files(results_dir)
    if not bad:
        return Path(results_dir)
    copy = Path(work) / "results"
    shutil.copytree(results_dir, copy)
    for path in bad:
        print(f"publish: skipping {path}: not a readable results file", file=sys.stderr)
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
    # next to the given config: asv finds its clone of the project relative to its config file
    temp_config = config.parent / f".publish-{os.getpid()}.conf.json"
    try:
        new_html = work / "html"
        used = clean_results(results_dir, work)
        conf.update(html_dir=str(new_html), results_dir=str(used))
        for key in ("env_dir", "benchmark_dir"):
            conf[key] = str((base / conf[key]).resolve())
        temp_config.write_text(json.dumps(conf))
        proc = subprocess.run([sys.executable, "-m", "asv", "publish", "--config", str(temp_config)], cwd=base,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
            raise DashboardError(f"asv publish exited {proc.returncode} ({lines[-1].strip() if lines else 'no output'}); "
                                 f"{html_dir} is as it was")
        vendor(new_html)
        add_nav_links(new_html)
        readable_graphs(new_html)
        rows, entries = pages(temp_config, used, new_html)
        shutil.copy2(DASHBOARD / "html-README.md", new_html / "README.md")
        swap_in(new_html, html_dir, work / "old")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        temp_config.unlink(missing_ok=True)
    print(f"publish: {html_dir} ({len(rows)} overview rows, {len(entries)} flagged by paired steps). "
          "Open it with `cuda-bench serve` (http://127.0.0.1:8080): browsers refuse asv's data from file://",
          file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(CONF))
    args = parser.parse_args(argv)
    try:
        publish(args.config)
    except DashboardError as exc:
        print(f"publish: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
