"""``graph.html`` and its data, ``paired/*.js``: each case's paired chain per library, asv's medians
as context (the data as scripts, so that the page works opened from disk too)."""

from __future__ import annotations

import itertools
import json

from cuda_bench.foundations.names import COLD_TWINS, CPP, HARNESS, case_name, cpp_id, short_name
from cuda_bench.foundations.stats import CONFIDENCE
from cuda_bench.foundations.text import number
from cuda_bench.publish import summary
from cuda_bench.publish.pages.html import banner, page
from cuda_bench.results import asv_files, history

GRAPH = f"""<div class="graph-controls"><label>machine <select id="machine"></select></label>
<label>operation <select id="benchmark"></select></label> <label>case <select \
id="case"></select></label></div>
<div id="graph-legend"></div>
<h3 class="plot-title">Paired chain: time per call relative to the first commit of each paired run
<small>(product of the paired steps' ratios; band: the products of their {CONFIDENCE:.0%} interval \
ends;
▲ slower, ▼ faster where a step flagged it, ○ not reproduced, ◆ put down to a cuda-bindings \
change)</small></h3>
<div id="chain" class="plot"></div>
<h3 class="plot-title">asv's medians per call <small>(one unpaired run per commit: context, not a \
verdict; they
move with the machine's state)</small></h3>
<div id="medians" class="plot"></div>
<div id="graph-notes"></div>
<table class="table table-condensed" id="graph-commits"></table>
<details class="graph-data"><summary>The graphs' numbers, as a table: per commit and library, \
each paired chain with its band, and asv's median</summary>
<table class="table table-condensed" id="graph-data"></table></details>
<script src="vendor/jquery/dist/jquery.min.js"></script>
<script src="vendor/flot/jquery.flot.js"></script>
<script src="vendor/flot/jquery.flot.fillbetween.js"></script>
<script src="vendor/flot/jquery.flot.symbol.js"></script>
<script src="graph.js"></script>"""


def graph_data(machine, runs_of, steps, suite, known):
    """{benchmark: the graph page's data} of one machine: the commits on the x axis (history order,
    each with its name and the cuda-bindings its build ran, ``bindings``: :func:`text.build_words`)
    and per case and library the paired chain (with its band and where it starts), the flags, and
    asv's medians; the C++ twin's medians where it has one. ``runs_of``: one build per commit
    (``asv_files.one_per_commit``)."""
    newest = {data["commit_hash"]: data for data in runs_of}
    commits = summary.order(newest, known)
    at = {c: i for i, c in enumerate(commits)}
    chains = history.chains(steps, commits)
    flagged = summary.flags(steps, known)
    values = {c: asv_files.values(newest[c]) for c in commits}
    shown = history.builds(runs_of, steps)
    axis = [
        {
            "hash": c,
            "name": summary.name(c, known),
            "tag": summary.tag(c, known) or "",
            "title": (known.get(c) or {}).get("title", ""),
            "date": (known.get(c) or {}).get("date"),
            "bindings": shown[c],
        }
        for c in commits
    ]
    out = {}
    for benchmark, info in suite.items():
        if (
            benchmark in (CPP, HARNESS, *COLD_TWINS.values())
            or not benchmark.split(".")[-1].startswith("time_")
            or not info.get("params")
        ):
            continue
        params = info["params"]
        apis = [a.strip("'") for a in params[0]]
        cases = [tuple(c) for c in itertools.product(*params[1:])] if len(params) > 1 else [()]
        series = {}
        for case in cases:
            label = " ".join(c.strip("'") for c in case)
            per = {}
            for api in apis:
                found = library_series(
                    benchmark, api, case, commits, at, chains, values, flagged, known
                )
                if found:
                    per[api] = found
            twin = cpp_id(benchmark, ("'x'", *case))
            key = (CPP, (f"'{twin}'",))
            if benchmark in COLD_TWINS:  # a cold start's twin: a program of its own
                key, twin = (COLD_TWINS[benchmark], ("'cpp'",)), short_name(COLD_TWINS[benchmark])
            cpp = [[at[c], values[c].get(key)] for c in commits]
            cpp = [p for p in cpp if number(p[1])]
            if cpp:
                per["cpp"] = {"chain": [], "median": cpp, "flags": [], "twin": twin}
            if per:
                series[label] = per
        if series:
            out[benchmark] = {
                "machine": machine,
                "benchmark": benchmark,
                "short": short_name(benchmark),
                "param_names": info.get("param_names", [])[1:],
                "commits": axis,
                "cases": series,
            }
    return out


def library_series(benchmark, api, case, commits, at, chains, values, flagged, known):
    """One library's series of one case on the graph page: its paired chains, one per build family
    (``history.chains``; each point the commit's place, the chain's value and band, where it
    starts, its family and how many steps it multiplies), asv's medians, and the steps' flags (each
    with what it is put down to, ``history.attributed``, or "", and the step's family, or None
    across families); None where it has neither a chain nor a median."""
    full = case_name(benchmark, (f"'{api}'", *case))
    chain = chains.get(full, {})
    median = [[at[c], values[c].get((benchmark, (f"'{api}'", *case)))] for c in commits]
    median = [p for p in median if number(p[1])]
    if not chain and not median:
        return None
    points = [
        [at[c], *found[c][:3], summary.name(found[c][3], known), build, found[c][4]]
        for build, found in chain.items()
        for c in commits
        if c in found
    ]
    marks = [
        [
            at[s["head"]],
            c["verdict"],
            summary.status(c),
            c["ratio"],
            c["low"],
            c["high"],
            summary.name(s["base"], known),
            summary.name(s["head"], known),
            history.attributed(s, c) or "",
            history.family(s),
        ]
        for s, c, _ in flagged.get(full, [])
        if s["head"] in at
    ]
    return {"chain": points, "median": median, "flags": marks}


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


def document(found):
    """``graph.html`` of ``found`` (``read.History``); its data come apart (:func:`write_data`)."""
    return page("Graphs", GRAPH, "graph.html", banner(found))


def write_data(html_dir, found):
    """The graph page's data of ``found`` (``read.History``), every machine's
    (:func:`graph_data`)."""
    write_graphs(
        html_dir,
        {
            name: graph_data(name, machine.runs, machine.steps, found.suite, found.known)
            for name, machine in found.machines.items()
        },
    )
