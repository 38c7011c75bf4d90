"""asv's own pages, part of the site as asv wrote them: self-contained (each library's address
points at its copy from ``dashboard/vendor/``, the one change to asv's files), the app at
``asv.html``. What they show comes from data asv reads: its Benchmark list holds the medians alone,
``regressions.json`` and the Atom feed the paired steps' flags; asv's step detection on unpaired
medians never shows."""

from __future__ import annotations

import itertools
import json
import re
import shutil

from cuda_bench.foundations.names import split_case
from cuda_bench.foundations.paths import SITE, VENDOR
from cuda_bench.foundations.text import (
    number,
)
from cuda_bench.results import asv_files, history

# the end of each CDN address asv's pages use -> the same library's file in dashboard/vendor/ (its
# README says which npm package and version each comes from, and its licence)
ASSETS = {
    "jquery-3.3.1.min.js": "jquery/dist/jquery.min.js",
    "flot/0.8.3/jquery.flot.min.js": "flot/jquery.flot.js",
    "flot/0.8.3/jquery.flot.time.min.js": "flot/jquery.flot.time.js",
    "flot/0.8.3/jquery.flot.selection.min.js": "flot/jquery.flot.selection.js",
    "flot/0.8.3/jquery.flot.categories.min.js": "flot/jquery.flot.categories.js",
    "flot-orderbars@1.0.0/js/jquery.flot.orderBars.js": (
        "flot-orderbars/js/jquery.flot.orderBars.js"
    ),
    "stupidtable/1.0.1/stupidtable.min.js": "stupid-table-plugin/stupidtable.min.js",
    "blueimp-md5/2.19.0/js/md5.min.js": "blueimp-md5/js/md5.min.js",
    "bootstrap@3.1.1/dist/js/bootstrap.min.js": "bootstrap/dist/js/bootstrap.min.js",
    "bootstrap@3.1.1/dist/css/bootstrap.min.css": "bootstrap/dist/css/bootstrap.min.css",
}


# bootstrap.min.css loads ../fonts/glyphicons-*; the graph page's band and markers
EXTRA_FILES = [
    "bootstrap/dist/fonts",
    "flot/jquery.flot.fillbetween.js",
    "flot/jquery.flot.symbol.js",
]


# publish/site/: the project's pages' style and scripts
SITE_FILES = ["site.css", "site.js", "graph.js"]


TAG = re.compile(r'<(script|link)\b[^>]*?(?:src|href)="(https?://[^"]+)"[^>]*>(?:</script>)?')


class DashboardError(Exception):
    pass


def vendor(html_dir):
    """Copy the libraries (``dashboard/vendor/``, with their licences) into html/vendor and point
    every page at them: each ``<script>`` or ``<link>`` of a CDN address in asv's pages becomes one
    of its copy, the one change made to asv's files. No address outside html/ stays, and nothing is
    fetched."""
    missing = [path for path in [*ASSETS.values(), *EXTRA_FILES] if not (VENDOR / path).exists()]
    if missing:
        raise DashboardError(f"{VENDOR} lacks {', '.join(missing)} (see its README.md)")
    shutil.copytree(VENDOR, html_dir / "vendor", dirs_exist_ok=True)
    for name in SITE_FILES:
        shutil.copy2(SITE / name, html_dir / name)

    def local(match):
        kind, url = match.groups()
        for suffix, path in ASSETS.items():
            if url.endswith(suffix):
                if kind == "script":
                    return f'<script src="vendor/{path}"></script>'
                return f'<link rel="stylesheet" href="vendor/{path}">'
        raise DashboardError(
            f"{url}: an asset this script does not know (a newer asv?); add it to ASSETS"
        )

    for page in html_dir.glob("*.html"):
        page.write_text(TAG.sub(local, page.read_text()))


def asv_app(html_dir):
    """asv's app moves to asv.html, as asv wrote it (the front page, index.html, is the
    project's); asv's navigation bar links the project's name to ``project_url``, which
    asv.conf.json sets to that front page."""
    (html_dir / "index.html").rename(html_dir / "asv.html")


def median_summaries(html_dir, runs, revisions):
    """asv's Benchmark list (the summary.json of each graph folder) holds each case's median at
    the machine's newest measured commit, and no change: asv finds its changes by step detection
    on unpaired medians, which no page shows. What changed is what the paired steps judged: the
    project's pages say it, each with its interval."""
    newest = {}
    for machine, data in runs:
        newest[machine] = data
    for path in (html_dir / "graphs").rglob("summary.json"):
        parts = path.relative_to(html_dir).parts
        machine = next((p[len("machine-") :] for p in parts if p.startswith("machine-")), None)
        if machine not in newest:
            continue
        rows = json.loads(path.read_text())
        values = asv_files.values(newest[machine])
        head = newest[machine]["commit_hash"]
        for row in rows:
            combo = split_case(row["pretty_name"])[1] if row["idx"] is not None else ()
            value = values.get((row["name"], combo))
            row.update(
                last_value=value if number(value) else None,
                last_err=None,
                prev_value=None,
                change_rev=None,
                last_rev=revisions.get(head),
            )
        path.write_text(json.dumps(rows, separators=(",", ":")))


def asv_regressions(steps_by_machine, suite, revisions, html_dir):
    """asv's regressions.json entries for the open regressions of the paired steps: [name, graph,
    params, flat index, last, best, [[rev before, rev after, before, after]]]; before/after are the
    step's medians per call, base and head, as regressions.html shows them beside the paired ratio
    (asv's factor is their quotient, which that page names where it lies outside the ratio's
    interval). asv.html#regressions opens regressions.html, which shows the intervals and status."""
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
            head_s = case["head_ns"] * 1e-9 if number(case.get("head_ns")) else None
            head_s = head_s or base_s * case["ratio"]
            entries.append(
                [
                    case["name"],
                    graph,
                    {"machine": machine},
                    idx,
                    head_s,
                    base_s,
                    [[before, after, base_s, head_s]],
                ]
            )
    return entries
