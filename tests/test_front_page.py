"""The front page of the committed history (``results/``) in a real browser: its first screen answers for every
machine side by side (issue 57, item 4); each cell of an operations table gives one time, from one run, and its
hover names the run of every number (item 2); and every number of the first screen, of each machine's verdicts
and of each cell is recomputed here from ``results/``'s files, read as JSON by this file alone, so that a number
that drifts from what the files hold fails. Nothing here depends on how many commits, steps or machines the
history holds.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import pytest
from conftest import ROOT
from test_dashboard import browser_tab, served

from cuda_bench.foundations import stats
from cuda_bench.foundations.text import fmt

#: asv publish and a real browser: the full suite's lane
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    yield from served(tmp_path_factory.mktemp("committed"), ROOT / "results")


# --- results/ read here, by this file alone ---------------------------------------------------------------
def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def machines_of(results_dir):
    """{machine: its asv results files} of every machine folder with one."""
    out = {}
    for folder in sorted(p for p in Path(results_dir).iterdir() if p.is_dir()):
        files = [json.loads(p.read_text()) for p in folder.glob("*.json") if p.name != "machine.json"]
        if files:
            out[folder.name] = files
    return out


def tag_of(commit, known):
    return next((t for t in (known.get(commit) or {}).get("tags", []) if t.startswith("cuda-core-v")), None)


def version(tag):
    return tuple(int(x) for x in re.findall(r"\d+", tag)[:3])


def is_control(name):
    return name.startswith(("bench_cpp.", "bench_harness."))


def bindings_version(record, side):
    return ((record.get("versions") or {}).get(side) or {}).get("cuda-bindings")


def build(record, side):
    """The build one side of a step record ran: "source" for cuda_bindings built from the commit, else the wheel's
    version."""
    found = bindings_version(record, side)
    if record["bindings"] == "source" or "+g" in (found or ""):
        return "built from the commit"
    return f"{found or record['bindings']} wheel"


def grouped(records):
    """Step records grouped as the history keeps them, one step per (base, head, bindings): each case's verdict
    over all its measurements (``stats.repeated_verdict``, the rule's one home), its numbers those of its newest
    flag (a regression), else of its newest measurement, and the link a chain multiplies (a flag not reproduced:
    the newest measurement that cleared it)."""
    groups = {}
    for record in records:
        groups.setdefault((record["base"], record["head"], record["bindings"]), []).append(record)
    out = []
    for (base, head, bindings), found in groups.items():
        by_name = {}
        for record in found:
            for case in record["cases"]:
                by_name.setdefault(case["name"], []).append(
                    (case, (record["host"]["start"], case["verdict"], record["settings"]["layouts"])))
        cases = {}
        for name, seen in by_name.items():
            verdict, confirmed = stats.repeated_verdict([triple for _, triple in seen])
            flags = [c for c, t in seen if t[1] == "regression"]
            shown = flags[-1] if verdict in ("regression", "not reproduced") and flags else seen[-1][0]
            cleared = [c for c, t in seen if t[1] != "regression"]
            link = cleared[-1] if verdict == "not reproduced" and cleared else shown
            cases[name] = {"name": name, "verdict": verdict, "confirmed": confirmed, "ratio": shown["ratio"],
                           "low": shown["low"], "high": shown["high"], "link": link["ratio"],
                           "control": bool(shown.get("control")) or is_control(name)}
        first = found[0]
        out.append({"base": base, "head": head, "bindings": bindings, "cases": cases, "date": first["date"],
                    "first": first, "errors": found[-1].get("errors") or {}, "only": first.get("only") or {},
                    "identical": bool(first.get("identical")), "release": bool(first.get("release_tags")),
                    "builds": (build(first, "base"), build(first, "head")),
                    "wheels": (bindings_version(first, "base"), bindings_version(first, "head"))})
    return out


def across_wheels(step):
    wheels = step["wheels"]
    return step["bindings"] != "source" and all(wheels) and wheels[0] != wheels[1]


def put_down(step, case):
    return across_wheels(step) and "('bindings'" in case["name"]


def context(step, steps):
    """A step across a wheel change that another step of the same commits, with one wheel, judges."""
    return across_wheels(step) and any(
        o is not step and (o["base"], o["head"]) == (step["base"], step["head"]) and not o["identical"]
        and not across_wheels(o) and o["wheels"][0] for o in steps)


def counted(step):
    return [c for c in step["cases"].values() if not c["control"] and not put_down(step, c)]


def count_words(step):
    """'2 slower · 1 faster · 97 same', and the not reproduced where there are some."""
    cases = counted(step)
    said = [f"{sum(c['verdict'] == v for c in cases)} {w}"
            for v, w in (("regression", "slower"), ("improvement", "faster"), ("same", "same"))]
    reproduced = sum(c["verdict"] == "not reproduced" for c in cases)
    return " · ".join(said + ([f"{reproduced} not reproduced"] if reproduced else []))


def flags(steps):
    """Every regression of ``steps`` still open: not a control, not put down to a wheel change, not context."""
    return [(s, c) for s in steps if not context(s, steps) for c in counted(s) if c["verdict"] == "regression"]


def interval_text(case):
    return f"×{case['ratio']:.3f} [{case['low']:.3f}, {case['high']:.3f}]"


def shown_file(files):
    """The results file of a commit the pages show: cuda_bindings built from the commit first, else the newest."""
    def rank(d):
        started = [row[d["result_columns"].index("started_at")] or 0 for row in d["results"].values()]
        return d["env_vars"].get("CUDA_BENCH_BINDINGS") == "source", max(started, default=0)
    return max(files, key=rank)


def asv_medians(data):
    """{(benchmark, (params...)): median} of one asv results file."""
    out = {}
    column = data["result_columns"]
    for name, row in data["results"].items():
        entry = dict(zip(column, row))
        for combo, value in zip(itertools.product(*entry["params"]), entry["result"] or []):
            out[(name, combo)] = value
    return out


class Machine:
    """One machine of results/, read here: its commits, its head, its steps."""

    def __init__(self, results_dir, name, files, known):
        self.name, self.known = name, known
        self.commits = {d["commit_hash"] for d in files}
        placed = [c for c in self.commits if (known.get(c) or {}).get("position") is not None]
        self.head = max(placed, key=lambda c: known[c]["position"])
        self.head_file = shown_file([d for d in files if d["commit_hash"] == self.head])
        self.head_build = ("built from the commit" if self.head_file["env_vars"].get("CUDA_BENCH_BINDINGS") == "source"
                           else None)
        self.steps = grouped(lines(Path(results_dir) / name / "steps.jsonl"))
        tagged = lambda c: tag_of(c, known)  # noqa: E731
        self.release_steps = [s for s in self.steps if s["release"] or (tagged(s["base"]) and tagged(s["head"]))]
        self.main_steps = [s for s in self.steps if not tagged(s["base"]) and not tagged(s["head"])]
        self.over_cpp = [r for r in lines(Path(results_dir) / name / "over-cpp.jsonl") if r["commit"] == self.head]

    def chain(self, name, family):
        """(product, root, steps) of case ``name``'s chain to the head along the steps of one build, walked back."""
        product, commit, count = 1.0, self.head, 0
        while True:
            into = [s for s in self.steps if s["head"] == commit and s["builds"] == (family, family)
                    and (s["identical"] or name in s["cases"])]
            if not into:
                return product, commit, count
            step = max(into, key=lambda s: s["date"])
            product *= 1.0 if step["identical"] else step["cases"][name]["link"]
            commit, count = step["base"], count + 1


# --- the pages, as the browser shows them -----------------------------------------------------------------
GLANCE = """() => {
  const table = document.querySelector('table.glance'), box = table.getBoundingClientRect();
  const machines = [...table.querySelectorAll('thead th[data-machine]')].map(th => th.dataset.machine);
  const rows = Object.fromEntries([...table.querySelectorAll('tbody tr')].map(tr => [tr.dataset.row,
      Object.fromEntries([...tr.querySelectorAll('td')].map(td => [td.dataset.machine, td.innerText]))]));
  const sections = [...document.querySelectorAll('section.machine')].map(s => {
      const all = [...s.querySelectorAll('h3, table')];
      const ops = all.findIndex(e => e.matches('table.overview')), budget = all.findIndex(e => e.matches('h3.budgets'));
      return [s.dataset.machine, ops, budget,
              [...s.querySelectorAll('table.budgets')].filter(t => !t.closest('details'))
                  .flatMap(t => [...t.querySelectorAll('tbody tr')].map(tr => tr.dataset.verdict)),
              [...s.querySelectorAll('details.budgets-within')].map(d => d.open)];
  });
  return {machines, rows, bottom: box.bottom, right: box.right, width: innerWidth, height: innerHeight,
          scrollY, sections};
}"""


def test_the_first_screen_answers_for_every_machine_side_by_side(committed):
    """At 1,400 × 900 the front page's first screen, before any scrolling, holds a column for every machine that
    results/ has: main's head and whether it is fine; it against the previous measured commit; what is open on
    main and between releases, and how sure (confirmed or not yet); it against the newest release; the newest
    release against the one before. In each machine's part below, the operations table comes before the budget
    table, which shows the calls over their budget and folds the rest."""
    html, results_dir, origin = committed
    expected = sorted(machines_of(results_dir))
    for tab in browser_tab(origin):
        tab.goto(f"{origin}/index.html")
        said = tab.evaluate(GLANCE)
    assert sorted(said["machines"]) == expected and len(expected) >= 2
    assert said["scrollY"] == 0 and said["bottom"] <= said["height"] and said["right"] <= said["width"]
    assert list(said["rows"]) == ["head", "previous", "open", "release", "release-open", "release-step"]
    for key, cells in said["rows"].items():
        assert sorted(cells) == expected and all(text.strip() for text in cells.values()), key
    for name, text in said["rows"]["head"].items():
        assert re.search(r"\b(fine|slower|regressions open|not paired yet)\b", text), (name, text)
    for text in [*said["rows"]["open"].values(), *said["rows"]["release-open"].values()]:
        assert text.strip() == "none" or re.search(r"\d+ confirmed · \d+ not yet confirmed; the largest", text)
    for name, ops, budget, shown, folded in said["sections"]:
        assert ops >= 0 and (budget < 0 or ops < budget), name  # the operations first
        assert set(shown) <= {"over"} and not any(folded), name  # the budgets folded to what is over


def test_the_first_screen_and_each_verdict_are_what_results_holds(committed):
    """Recomputed from results/'s files here: each machine's head (the furthest along main of its measured
    commits), the counts of the step to it from the previous measured commit (the step of the build the page
    names, the head's own build where there is one of it), what is open on main and between releases (how many,
    how many confirmed, the largest with its interval), main's head against the newest release, and the newest
    release step's counts."""
    html, results_dir, origin = committed
    known = json.loads((Path(results_dir) / "commits.json").read_text())
    found = {name: Machine(results_dir, name, files, known) for name, files in machines_of(results_dir).items()}
    for tab in browser_tab(origin):
        tab.goto(f"{origin}/index.html")
        said = tab.evaluate(GLANCE)["rows"]
        rows = {name: tab.eval_on_selector_all(
            f"section.machine[data-machine='{name}'] table.verdicts tr[data-against]",
            "trs => trs.map(tr => [tr.dataset.against, tr.dataset.base || '', tr.dataset.build || '', tr.innerText])")
            for name in found}
        heads = dict(tab.eval_on_selector_all("section.machine", "ss => ss.map(s => [s.dataset.machine, "
                                              "s.querySelector('p.head').dataset.commit])"))
    for name, m in found.items():
        assert heads[name] == m.head, name
        assert m.head[:9] in said["head"][name]
        by = {r[0]: r for r in rows[name]}
        previous = by["previous"]
        if previous[1]:  # the page names the step's build: the one the head is shown in where it has one
            step = next(s for s in m.main_steps if s["head"] == m.head and s["base"] == previous[1]
                        and f"cuda-bindings {s['builds'][0]}" == previous[2] and s["builds"][0] == s["builds"][1])
            if m.head_build and any(s["head"] == m.head and s["builds"] == (m.head_build,) * 2 for s in m.main_steps):
                assert step["builds"][0] == m.head_build
            assert count_words(step) in previous[3] and count_words(step) in said["previous"][name]
        opened = flags(m.main_steps)
        check_open(said["open"][name], opened)
        check_open(said["release-open"][name], flags(m.release_steps))
        tags = {c: tag_of(c, known) for c in m.commits if tag_of(c, known)}
        if tags:
            newest = max(tags, key=lambda c: version(tags[c]))
            into = [s for s in m.steps if s["base"] == newest and s["head"] == m.head and not context(s, m.steps)]
            if into:
                assert count_words(into[-1]) in said["release"][name]
            else:
                assert "not measured yet" in said["release"][name] and tags[newest] in said["release"][name]
            ladder = [s for s in m.release_steps if tag_of(s["head"], known) and not context(s, m.release_steps)]
            top = max(ladder, key=lambda s: version(tag_of(s["head"], known)))
            assert f"{tag_of(top['base'], known)} → {tag_of(top['head'], known)}" in said["release-step"][name]
            assert count_words(top) in said["release-step"][name]
        else:
            assert "no release" in said["release"][name] and "no release" in said["release-step"][name]


def check_open(text, opened):
    if not opened:
        assert text.strip() == "none"
        return
    confirmed = sum(c["confirmed"] for _, c in opened)
    _, largest = max(opened, key=lambda sc: sc[1]["ratio"])
    assert f"{len(opened)} open" in text
    assert f"{confirmed} confirmed · {len(opened) - confirmed} not yet confirmed" in text
    assert interval_text(largest) in text


CELLS = """table => [...document.querySelectorAll(table)].flatMap(t => [...t.querySelectorAll('td[data-value]')]
    .map(td => ({machine: t.dataset.machine, name: td.dataset.name || '', api: td.classList[0],
                 value: td.dataset.value, one: td.dataset.oneProcess || '', title: td.title,
                 row: td.closest('tr').dataset.benchmark, case: td.closest('tr').dataset.case,
                 shown: (td.querySelector('a') || td).innerText, text: td.innerText,
                 ratio: (td.querySelector('small.vs-bindings') || {}).innerText || '',
                 order: (td.querySelector('.order-differs') || {}).innerText || '',
                 differs: !!td.querySelector('.order-differs')})))"""

#: how each line of a cell's hover begins: each names the run its numbers come from
RUN_NAMED = ("In the over-C++ run of ", "asv's median in asv's run of ", "Paired step ", "Paired chain (every step's "
             "builds: cuda-bindings ", "Work per call, counted at ", "Over its C++ twin, from asv's run below")
TIME = re.compile(r"\d+(?:\.\d+)? (?:ns|µs|ms)\b")


def test_each_cell_gives_one_time_from_one_run_and_says_where_asv_orders_it_otherwise(committed):
    """Every cell of every operations table: one time, its time in one process where an over-C++ run timed the
    form (then no asv median in it), else asv's median marked "asv"; each line of its hover names the run its
    numbers come from, asv's as "unpaired, context"; the cost over C++ in the hover is of the cell's own run (its
    Python time is the cell's). Where the paired ratio over cuda.bindings' orders the two libraries one way and
    asv's medians the other, the cell says so, and nowhere else."""
    html, results_dir, origin = committed
    for tab in browser_tab(origin):
        tab.goto(f"{origin}/index.html")
        cells = tab.evaluate(CELLS, "table.overview")
    assert cells
    for cell in cells:
        text = cell["text"].replace(cell["ratio"], "").replace(cell["order"], "")
        assert len(TIME.findall(text)) == (1 if cell["value"] or cell["one"] else 0), cell  # one time per cell
        if not (cell["value"] or cell["one"]):
            assert text.strip() in ("failed", "not measured"), cell
        elif cell["one"]:
            assert "asv" not in text and cell["shown"] == fmt(float(cell["one"]) * 1e-9), cell
        else:
            assert cell["shown"].startswith("asv "), cell
        for line in cell["title"].splitlines():
            assert line.startswith(RUN_NAMED), line
            if line.startswith("asv's median"):
                assert line.endswith("unpaired, context"), line
        first = (cell["title"].splitlines() or [""])[0]
        match = re.search(r"\((\S+ \S+) against (\S+ \S+) in one process", first)
        if cell["one"] and match:
            assert match.group(1) == cell["shown"], cell  # the cost over C++ is of the cell's run
    rows = {}
    for cell in cells:
        rows.setdefault((cell["machine"], cell["row"], cell["case"]), {})[cell["api"]] = cell
    for key, row in rows.items():
        reference = row.get("bindings")
        for api, cell in row.items():
            if api in ("bindings", "cpp") or not (cell["ratio"] and reference and cell["value"] and reference["value"]):
                assert not cell["differs"], key
                continue
            low, high = (float(x) for x in re.search(r"\[([\d.]+), ([\d.]+)\]", cell["ratio"]).groups())
            faster_asv = float(cell["value"]) < float(reference["value"])
            assert cell["differs"] == ((high < 1 and not faster_asv) or (low > 1 and faster_asv)), (key, api)


def test_every_cell_number_is_what_results_holds(committed):
    """Each cell's numbers recomputed from results/'s files here: its time in one process is the case's Python
    time in the over-C++ run its hover names (that run's record in over-cpp.jsonl), its ratio over cuda.bindings'
    the median of the two forms' process ratios in that run, with its 95 % interval; asv's median is the shown
    results file's (source first, else the newest); the paired chain in its hover the product of the ratios of
    the steps of its one build, walked back from main's head."""
    html, results_dir, origin = committed
    known = json.loads((Path(results_dir) / "commits.json").read_text())
    found = {name: Machine(results_dir, name, files, known) for name, files in machines_of(results_dir).items()}
    for tab in browser_tab(origin):
        tab.goto(f"{origin}/index.html")
        cells = tab.evaluate(CELLS, "table.overview")
    checked = {"one": 0, "ratio": 0, "asv": 0, "chain": 0}
    for cell in cells:
        m = found[cell["machine"]]
        if cell["value"]:
            name = cell["name"] or None
            if name:
                benchmark, args = name.split("(", 1)
                combo = tuple(repr(a) for a in re.findall(r"'([^']*)'", args))
                assert float(cell["value"]) == asv_medians(m.head_file)[(benchmark, combo)], cell
                checked["asv"] += 1
        if cell["one"] and cell["name"]:
            when = re.match(r"In the over-C\+\+ run of (\S+ \S+) UTC", cell["title"]).group(1).replace(" ", "T")
            runs = [r for r in m.over_cpp if r["date"].startswith(when)
                    and any(c["name"] == cell["name"] for c in r["cases"])]
            assert runs, cell
            record = runs[-1]
            case = next(c for c in record["cases"] if c["name"] == cell["name"])
            assert cell["shown"] == fmt(case["py_ns"] * 1e-9), cell
            checked["one"] += 1
            if cell["ratio"]:
                benchmark, args = cell["name"].split("(", 1)
                reference = next(c for c in record["cases"]
                                 if c["name"] == f"{benchmark}('bindings'{args[args.index(chr(39), 1) + 1:]}")
                per = [a / b for a, b in zip(case["process_ratios"], reference["process_ratios"]) if a > 0 and b > 0]
                ratio, low, high, _ = stats.median_interval(per, 0.95)
                assert cell["ratio"] == interval_text({"ratio": ratio, "low": low, "high": high}), cell
                checked["ratio"] += 1
        chain = re.search(r"^Paired chain \(every step's builds: cuda-bindings (.+?)\): ×([\d.]+) \[[^\]]*\] since "
                          r"(\w+) \((\d+) steps?\)", cell["title"], re.M)
        if chain and cell["name"]:
            value, root, count = m.chain(cell["name"], chain.group(1))
            assert (f"{value:.3f}", root[:9], count) == (chain.group(2), chain.group(3), int(chain.group(4))), cell
            checked["chain"] += 1
    assert all(checked.values()), checked
    assert not any(math.isnan(float(c["value"])) for c in cells if c["value"])


def test_a_case_never_measured_links_to_no_graph_and_its_graph_says_so(committed):
    """A cell of a case main's head did not measure (a skipped case: asv's NaN) says "not measured" and links to no
    graph; graph.html asked for a case that the machine never measured (the committed history's CompileThreads 2,
    4 and 8, or one no suite has) says so and names the case it shows instead, never showing another silently."""
    html, results_dir, origin = committed
    machine = sorted(machines_of(results_dir))[0]
    for tab in browser_tab(origin):
        tab.goto(f"{origin}/index.html")
        unmeasured = tab.eval_on_selector_all(
            "table.overview td[data-value='']", "tds => tds.filter(td => td.innerText.trim() === 'not measured')"
            ".map(td => [td.closest('table').dataset.machine, td.closest('tr').dataset.benchmark, "
            "td.closest('tr').dataset.case, td.querySelectorAll('a').length])")
        assert all(links == 0 for *_, links in unmeasured)
        asked = [(machine, "bench_launch.Launch.time_launch", "no such case"), *(u[:3] for u in unmeasured)]
        for machine, benchmark, case in asked:
            tab.goto(f"{origin}/graph.html#machine={machine}&benchmark={benchmark}&case={case}")
            tab.wait_for_function("window.cudaBenchGraph && window.cudaBenchGraph.ready", timeout=20000)
            listed = tab.evaluate("() => [...document.querySelectorAll('#case option')].map(o => o.value)")
            notes = tab.inner_text("#graph-notes")
            if case in listed:  # measured at another commit: its graph
                assert tab.evaluate("() => cudaBenchGraph.label") == case
            else:
                assert f"Case {case} of " in notes and "it was never measured there" in notes, notes
