"""Publish the dashboard: ``asv publish``, then make ``html/`` self-contained and add the overview page.

    python scripts/dashboard.py publish [--config asv.conf.json]
    python scripts/dashboard.py serve [--port 8080]

asv's pages load jQuery, flot, bootstrap, stupidtable and md5 from CDNs, so they do not render offline or
behind a firewall. ``publish`` copies the same libraries from npm packages (``dashboard/package.json``
pins them; ``npm ci`` fetches them once into ``dashboard/node_modules``) into ``html/vendor/`` and points
the pages at those copies. It then writes ``html/overview.html``: one row per operation with the C++,
cuda.bindings, cuda.core and CuPy latency at each machine's newest commit, each Python number both raw and
net of the harness floor (the same run's ``bench_harness.Floor``), the net overhead over C++, the change
since the previous commit and the previous release, a mark on what asv's regression detection flags
(``html/regressions.json``), and a link to asv's graph from every cell.
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "dashboard"
APIS = ("cpp", "bindings", "core", "cupy")
TITLES = {"cpp": "C++", "bindings": "cuda.bindings", "core": "cuda.core", "cupy": "CuPy"}
CPP = "bench_cpp.Cpp.track_latency"
FLOOR = "bench_harness.Floor.time_noop"

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


def add_nav_link(html_dir):
    index = html_dir / "index.html"
    text = index.read_text()
    anchor = '<li id="nav-li-regressions">'
    link = '<li id="nav-li-overview"><a href="overview.html">Overview</a></li>'
    if link not in text:
        if anchor not in text:
            raise DashboardError("index.html has no Regressions tab to put the Overview link after (a newer asv?)")
        text = text.replace(anchor, link + "\n\t" + anchor, 1)
        index.write_text(text)


# --- the overview ---------------------------------------------------------------------------------
def load_results(results_dir):
    """[(machine, results file dict)] for every results file, newest commit last per machine."""
    runs = []
    for machine_dir in sorted(p for p in Path(results_dir).iterdir() if (p / "machine.json").exists()):
        files = [json.loads(p.read_text()) for p in machine_dir.glob("*.json") if p.name != "machine.json"]
        files.sort(key=lambda d: d.get("date") or 0)
        runs.extend((machine_dir.name, data) for data in files)
    return runs


def values(data, column="result"):
    """{(benchmark, params tuple): value} of one results file's ``column`` (asv's medians by default;
    ``"samples"``: each case's recorded samples); params as asv writes them ("'core'")."""
    columns = data["result_columns"]
    out = {}
    for name, row in data["results"].items():
        entry = dict(zip(columns, row))
        params = entry.get("params") or []
        combos = list(itertools.product(*params))
        results = entry.get(column) if params else [entry.get(column)]
        if results is None:  # the whole benchmark failed (e.g. in setup_cache), or no such column
            results = [None] * len(combos)
        for combo, value in zip(combos, results):
            out[(name, combo)] = value
    return out


def samples(data):
    """{(benchmark, params tuple): [recorded samples]} of one results file, the finite positive ones
    (asv run/continuous ``--record-samples``; empty where none were recorded)."""
    return {key: [v for v in found or [] if isinstance(v, (int, float)) and math.isfinite(v) and v > 0]
            for key, found in values(data, "samples").items()}


def case_name(name, combo):
    """asv's name of one case: ``bench_device.SetCurrent.time_set_current('core')``."""
    return f"{name}({', '.join(combo)})" if combo else name


def cpp_id(benchmark, combo):
    """bench_launch.Launch.time_launch + ("'core'", "'16 ptr'") -> "launch[16 ptr]" (bench_cpp's IDs)."""
    op = benchmark.rsplit(".", 1)[1][len("time_"):]
    op = {"launch_prepacked": "launch"}.get(op, op)
    case = [c.strip("'") for c in combo[1:]]
    return f"{op}[{' '.join(case)}]" if case else op


def number(value):
    return isinstance(value, (int, float)) and not math.isnan(value)


def fmt(seconds):
    ns = seconds * 1e9
    return f"{ns:.0f} ns" if ns < 1e3 else f"{ns / 1e3:.2f} µs" if ns < 1e6 else f"{ns / 1e6:.2f} ms"


def signed(seconds):
    return ("-" if seconds < 0 else "+") + fmt(abs(seconds))


def fmt_net(seconds):
    """A net latency: fmt(), or "<0" when the call measured below the floor (noise; the true difference
    stays in overview.json)."""
    return "<0" if seconds < 0 else fmt(seconds)


def change(new, old):
    if not (number(new) and number(old)) or old == 0:
        return None
    return (new - old) / old


def regressions(html_dir):
    """{(benchmark, machine, flat param index)} that asv's regression detection flags."""
    path = html_dir / "regressions.json"
    if not path.exists():
        return set()
    flagged = set()
    for entry in json.loads(path.read_text()).get("regressions", []):
        name, _graph, params, idx = entry[:4]  # name carries the case: "bench.X.time_x('core')"
        flagged.add((name.split("(", 1)[0], params.get("machine"), idx))
    return flagged


def is_flagged(flagged, name, machine, idx):
    # asv leaves the machine out of a regression's params when there is only one machine
    return (name, machine, idx) in flagged or (name, None, idx) in flagged


def release_commits(html_dir):
    """{commit hash: tag} for cuda-core release tags, from asv publish's index.json."""
    index = html_dir / "index.json"
    if not index.exists():
        return {}
    data = json.loads(index.read_text())
    to_hash = data.get("revision_to_hash", {})
    return {to_hash[str(rev)]: tag for tag, rev in data.get("tags", {}).items()
            if tag.startswith("cuda-core-v") and str(rev) in to_hash}


def overview_rows(runs, flagged, releases, param_names):
    """One row per (machine, operation, case) at each machine's newest commit (``html/overview.json``).

    A row: ``machine``, ``benchmark``, ``case`` (the non-api parameters), ``commit``, ``release`` (the
    newest earlier commit with a cuda-core release tag, or None), ``params`` (the machine's), ``floor``
    (this run's ``bench_harness.Floor.time_noop('noop')`` median in seconds, or None) and ``cells``, one
    per api present: ``cpp``, ``bindings``, ``core``, ``cupy``. A cell:

    - ``value``: asv's median in seconds (None: failed; NaN: skipped), ``benchmark``, ``params`` (for
      asv's graph link), ``regression`` (asv flags it);
    - Python cells only: ``net``: ``value - floor`` in seconds, the call without the timing harness
      (None when either is not a number; below 0 is noise and kept as measured), ``vs_commit`` and
      ``vs_release`` (relative change of ``value`` since the previous commit / release, or None),
      ``over_cpp_ns`` and ``over_cpp_x`` (only with a C++ twin: the Python call over the C++ one, in ns
      and as a ratio; ``over_cpp_x`` is None when the Python side is not above 0) and ``over_cpp_of``:
      ``"net"`` when those use ``net`` (the C++ twin is timed in-process, without the harness) or
      ``"raw"`` when the floor is unknown and they use ``value``.

    C++ cells have no ``net``: the twins never include the harness, their value is already net.
    """
    rows = []
    by_machine = {}
    for machine, data in runs:
        by_machine.setdefault(machine, []).append(data)
    for machine, history in by_machine.items():
        newest = history[-1]
        current = values(newest)
        floor = current.get((FLOOR, ("'noop'",)))
        previous = values(history[-2]) if len(history) > 1 else {}
        release = next((values(d) for d in reversed(history[:-1]) if d["commit_hash"] in releases), {})
        release_name = next((releases[d["commit_hash"]] for d in reversed(history[:-1])
                             if d["commit_hash"] in releases), None)
        cpp = {combo[0].strip("'"): (v, idx) for idx, ((name, combo), v) in
               enumerate((k, v) for k, v in current.items() if k[0] == CPP)}
        params_of = {}
        for (name, combo) in current:
            params_of.setdefault(name, []).append(combo)
        for name in sorted(params_of):
            if name in (CPP, FLOOR) or not name.split(".")[-1].startswith("time_"):
                continue
            combos = params_of[name]
            for case in dict.fromkeys(c[1:] for c in combos):  # asv's parameter order
                row = {"machine": machine, "benchmark": name, "case": [c.strip("'") for c in case],
                       "commit": newest["commit_hash"], "release": release_name, "floor": floor,
                       "params": newest["params"], "cells": {}}
                cpp_value, cpp_idx = cpp.get(cpp_id(name, ("'x'", *case)), (None, None))
                if number(cpp_value):
                    row["cells"]["cpp"] = {"value": cpp_value, "benchmark": CPP,
                                           "params": {"op": f"'{cpp_id(name, ('x', *case))}'"},
                                           "regression": is_flagged(flagged, CPP, machine, cpp_idx)}
                for idx, combo in enumerate(combos):
                    if combo[1:] != case:
                        continue
                    api = combo[0].strip("'")
                    value = current[(name, combo)]
                    net = value - floor if number(value) and number(floor) else None
                    cell = {"value": value, "net": net, "benchmark": name,
                            "params": dict(zip(param_names.get(name, []), combo)),
                            "vs_commit": change(value, previous.get((name, combo))),
                            "vs_release": change(value, release.get((name, combo))),
                            "regression": is_flagged(flagged, name, machine, idx)}
                    if number(cpp_value) and number(value):
                        # the C++ twin has no harness around it: compare it with the net call
                        python = value if net is None else net
                        cell["over_cpp_of"] = "raw" if net is None else "net"
                        cell["over_cpp_ns"] = (python - cpp_value) * 1e9
                        cell["over_cpp_x"] = python / cpp_value if python > 0 else None
                    row["cells"][api] = cell
                rows.append(row)
    return rows


def graph_link(benchmark, machine, params):
    """asv's own address for one line of one graph: index.html#bench?machine=m&p-api='core'"""
    parts = [f"machine={quote(machine)}", *(f"p-{quote(k)}={quote(v)}" for k, v in params.items())]
    return f"index.html#{benchmark}?{'&'.join(parts)}"


def render(rows):
    def pct(x):
        return "" if x is None else f"{x * 100:+.1f}%"

    out = []
    for machine in sorted({r["machine"] for r in rows}):
        mrows = [r for r in rows if r["machine"] == machine]
        commit = mrows[0]["commit"][:9]
        release = mrows[0]["release"] or "no earlier release in results"
        params = mrows[0]["params"]
        floor = mrows[0]["floor"]
        out.append(f'<h2>{html.escape(machine)} <small>commit {commit}; previous release: '
                   f'{html.escape(release)}</small></h2>')
        out.append(f'<p class="machine">{html.escape(params.get("gpu", "no GPU"))}, driver '
                   f'{html.escape(params.get("driver", "-"))} (CUDA {html.escape(params.get("cuda_driver", "-"))}), '
                   f'{html.escape(params.get("cpu", ""))}; harness floor '
                   f'<span class="floor">{fmt(floor) if number(floor) else "n/a"}</span></p>')
        out.append('<table class="table table-condensed table-hover overview" '
                   f'data-machine="{html.escape(machine)}"><thead><tr><th>operation</th><th>case</th>'
                   + "".join(f"<th>{TITLES[a]}</th>" for a in APIS) + "</tr></thead><tbody>")
        for row in mrows:
            module, cls, _ = row["benchmark"].split(".")
            out.append(f'<tr data-benchmark="{row["benchmark"]}" data-case="{html.escape(" ".join(row["case"]))}">'
                       f"<td>{module[6:]}.{cls}</td><td>{html.escape(' '.join(row['case']))}</td>")
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
                                f'net {html.escape(fmt_net(net))}</small>')
                notes = []
                if "over_cpp_ns" in cell:
                    x = "" if cell["over_cpp_x"] is None else f' / {cell["over_cpp_x"]:.1f}×'
                    notes.append(f'{signed(cell["over_cpp_ns"] * 1e-9)}{x} C++ ({cell.get("over_cpp_of", "raw")})')
                if cell.get("vs_commit") is not None:
                    notes.append(f'{pct(cell["vs_commit"])} vs prev. commit')
                if cell.get("vs_release") is not None:
                    notes.append(f'{pct(cell["vs_release"])} vs release')
                flag = ' <span class="label label-danger" title="asv flags a regression">regressed</span>' \
                    if cell.get("regression") else ""
                small = f'<br><small class="text-muted">{"; ".join(notes)}</small>' if notes else ""
                data_net = f' data-net="{net!r}"' if number(net) else ""
                out.append(f'<td class="{api}{" danger" if flag else ""}" data-value="{value!r}"{data_net}>'
                           f'<a href="{link}">{fmt(value)}</a>{net_text}{flag}{small}</td>')
            out.append("</tr>")
        out.append("</tbody></table>")
    return "\n".join(out)


PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>cuda-python latency overview</title><link rel="icon" href="swallow.ico">
<link rel="stylesheet" href="vendor/bootstrap/dist/css/bootstrap.min.css">
<style>body{{padding:1em}} td small{{font-size:75%}} .overview td{{white-space:nowrap}}</style></head>
<body><h1>cuda-python: latency per call <small><a href="index.html">asv dashboard</a> ·
<a href="index.html#regressions">regressions</a></small></h1>
<p>Median time per call at each machine's newest commit. Each Python number is shown twice: <b>raw</b>, as
asv measured it, and <b>net</b>, raw minus the <b>harness floor</b>. The floor is what the timing harness
itself costs: <code>bench_harness.Floor.time_noop</code> runs the same shape as every operation (asv's
parameterised timing loop around <code>self.fn(*self.args)</code>) with <code>fn = int</code>, a C builtin that
does nothing, and is recorded in the same run as the numbers it is subtracted from. A net below 0
(<code>&lt;0</code>) is noise: the call costs less than the floor's spread. C++ numbers
(<code>benchmarks/cpp/twins.cpp</code>) are timed in-process in C++ without the harness, so they are already
net. Under each number: the overhead over C++, net Python minus C++ and their ratio (marked
<i>(net)</i>; <i>(raw)</i> only where a run lacks the floor), and the change of the raw number since the
previous commit and the previous release. Every cell links to its asv graph.</p>
{tables}
</body></html>
"""


def overview(results_dir, html_dir):
    suite = json.loads((Path(results_dir) / "benchmarks.json").read_text())
    param_names = {name: b.get("param_names", []) for name, b in suite.items() if isinstance(b, dict)}
    rows = overview_rows(load_results(results_dir), regressions(html_dir), release_commits(html_dir), param_names)
    (html_dir / "overview.json").write_text(json.dumps(rows, indent=1))
    (html_dir / "overview.html").write_text(PAGE.format(tables=render(rows)))
    return rows


def publish(config):
    import json5  # asv's own reader of its config (the file has comments)

    conf = json5.loads(Path(config).read_text())
    base = Path(config).resolve().parent
    html_dir = (base / conf.get("html_dir", "html")).resolve()
    results_dir = (base / conf.get("results_dir", "results")).resolve()
    proc = subprocess.run([sys.executable, "-m", "asv", "publish", "--config", str(config)], cwd=base)
    if proc.returncode != 0:
        raise DashboardError(f"asv publish exited {proc.returncode}")
    vendor(html_dir)
    add_nav_link(html_dir)
    rows = overview(results_dir, html_dir)
    shutil.copy2(DASHBOARD / "html-README.md", html_dir / "README.md")  # asv publish empties html/
    print(f"dashboard: {html_dir}/index.html and overview.html ({len(rows)} rows)", file=sys.stderr)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("publish")
    p.add_argument("--config", default=str(ROOT / "asv.conf.json"))
    s = sub.add_parser("serve")
    s.add_argument("--config", default=str(ROOT / "asv.conf.json"))
    s.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)
    try:
        if args.command == "publish":
            publish(args.config)
        else:
            return subprocess.call([sys.executable, "-m", "asv", "preview", "--config", args.config,
                                    "--port", str(args.port)])
    except DashboardError as exc:
        print(f"dashboard: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
