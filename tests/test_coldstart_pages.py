"""The cold starts and the build times on the pages, drawn from a history (the dashboard tests' known-answer history,
tests/fixtures/site, with cold-start results and compile records added): the front page's cold-start group, the
graph data of each cold case, and builds.html's graph per package and its flag."""

from __future__ import annotations

import json
import re
import shutil

from conftest import ROOT  # also puts the project on sys.path

from cuda_bench.publish import read
from cuda_bench.publish.pages import builds, graph, landing
from cuda_bench.results import asv_files, buildtime

SITE = ROOT / "tests" / "fixtures" / "site" / "results"
COLD = {  # seconds, net of `python -c pass`
    "bench_coldstart.Import.time_import": (["'pathfinder'", "'bindings'", "'core'", "'cupy'"],
                                          [0.012, 0.041, 0.118, 0.233]),
    "bench_coldstart.FirstContext.time_first_context": (["'bindings'", "'core'", "'cupy'"], [0.21, 0.29, 0.41]),
    "bench_cpp.FirstContext.time_first_context": (["'cpp'"], [0.15]),
}


def with_cold_starts(tmp_path):
    """The site's history, main's head (its newest results file) holding the cold starts."""
    out = tmp_path / "results"
    shutil.copytree(SITE, out)
    files = sorted(asv_files.result_files(out / "gpu-a"), key=lambda p: json.loads(p.read_text())["date"])
    newest = files[-1]
    data = json.loads(newest.read_text())
    for name, (apis, values) in COLD.items():
        data["results"][name] = [values, [apis], "cold-1", data["date"], 1.0]
    newest.write_text(json.dumps(data))
    suite = json.loads((out / "benchmarks.json").read_text())  # as asv describes the suite that has them
    for name, (apis, _) in COLD.items():
        suite[name] = {"name": name, "params": [apis], "param_names": ["api"], "type": "time", "unit": "seconds",
                       "version": "cold-1"}
    (out / "benchmarks.json").write_text(json.dumps(suite))
    return out


def test_the_front_page_has_a_cold_start_group_with_the_first_contexts_cpp_twin_and_a_graph_per_case(tmp_path):
    found = read.load(with_cold_starts(tmp_path))
    cold = [r for r in found.rows if r["benchmark"].startswith("bench_coldstart.")]
    assert {r["benchmark"] for r in cold} == {"bench_coldstart.Import.time_import",
                                             "bench_coldstart.FirstContext.time_first_context"}
    assert not [r for r in found.rows if r["benchmark"].startswith("bench_cpp.FirstContext")]  # in its twin's row
    first = next(r for r in cold if "FirstContext" in r["benchmark"])
    assert first["cells"]["cpp"]["value"] == 0.15 and first["cells"]["core"]["value"] == 0.29
    assert first["cells"]["core"]["net"] is None  # net of `python -c pass` already, not of the harness floor
    html = landing.document(found)
    group = html[html.index("Cold start"):]
    table = group[:group.index("</table>")]
    assert re.findall(r"<th>([^<]+)</th>", table)[:6] == ["operation", "C++", "cuda.pathfinder", "cuda.bindings",
                                                          "cuda.core", "CuPy"]
    assert "coldstart.Import" in table and "coldstart.FirstContext" in table and "118.00 ms" in table
    lookups = html[html.index("cuda.pathfinder's lookups"):]
    assert "coldstart" not in lookups[:lookups.index("</table>")]
    data = graph.graph_data("gpu-a", found.machines["gpu-a"].runs, found.steps["gpu-a"], found.suite, found.known)
    assert set(data["bench_coldstart.Import.time_import"]["cases"][""]) == {"pathfinder", "bindings", "core", "cupy"}
    drawn = data["bench_coldstart.FirstContext.time_first_context"]["cases"][""]  # each cold case, C++ beside
    assert drawn["cpp"]["median"][-1][1] == 0.15 and drawn["cpp"]["twin"] == "cpp.FirstContext"
    assert "bench_cpp.FirstContext.time_first_context" not in data


HOST = {"start": "boot-1", "boot": "1"}


def build_row(commit, tree, cpu, when, cython="3.0.12"):
    versions = {"python": "3.12.3", "cython": cython, "setuptools": "80.9.0", "compiler": "gcc 13.3.0"}
    return {"commit": commit, "packages": {"cuda_bindings": {
        "action": "built", "key": tree, "seconds": cpu / 16, "wheels": [],
        "compile": {"built": when, "wall_seconds": cpu / 16, "cpu_seconds": cpu, "jobs": 16, "ccache": False,
                    "versions": versions}}}}


def test_the_build_time_page_draws_each_package_and_flags_a_doubling_beyond_the_rebuild_spread(tmp_path):
    out = with_cold_starts(tmp_path)
    known = asv_files.commits(out)
    main = sorted((c for c, info in known.items() if info["position"]), key=lambda c: known[c]["position"])
    rows = [build_row(main[0], "t1", 400.0, "2026-01-01T00:00:00Z"),
            build_row(main[0], "t1", 412.0, "2026-01-02T00:00:00Z"),
            build_row(main[1], "t2", 410.0, "2026-01-03T00:00:00Z"),
            build_row(main[2], "t3", 830.0, "2026-01-04T00:00:00Z", cython="3.1.0")]
    buildtime.keep(out / "gpu-a", rows, HOST)
    html = builds.document(read.load(out))
    part = html[html.index('data-package="cuda_bindings"'):]
    assert part.count("<circle") == 3  # one point per tree, at its first commit
    (flag,) = re.findall(r'<li data-base="(\w+)" data-head="(\w+)">(.*?)</li>', part)
    assert flag[:2] == (main[1], main[2])
    assert "Cython 3.0.12 → 3.1.0 (unpaired)" in flag[2] and "×2.02" in flag[2]
    assert "One tree built 2 times: 400, 412 CPU seconds" in part
    quiet = builds.document(read.load(SITE))
    assert "No build compiled on this machine has recorded its time yet" in quiet

