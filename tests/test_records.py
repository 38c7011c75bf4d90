"""The records next to asv's results: their schema (every record names its type and schema and is shape-checked
on read), the one upgrade of earlier records, and the figures the committed H200 history reads to.

``fixtures/history/figures.json`` holds what the code before records had a schema computed from the committed
history (its first 22 steps, 5 calibrations and 61 over-C++ runs, and cb56ab9f9's results file): each step's
verdict, ratio, interval and whether it is confirmed, each case's threshold, each over-C++ ratio with its range,
and the overview's numbers. The upgraded records must read to exactly the same.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from cuda_bench.publish import overview, summary
from cuda_bench.results import asv_files, history, overcpp_read, records

FIXTURE = Path(__file__).parent / "fixtures" / "history"
MACHINE = "nvidia-h200"


def history_as_fixed(tmp_path):
    """results/ with cb56ab9f9's results file and the first records of each committed record file: the history
    the fixture's figures were computed from."""
    figures = json.loads((FIXTURE / "figures.json").read_text())
    folder = tmp_path / "results" / MACHINE
    shutil.copytree(FIXTURE / MACHINE, folder)
    shutil.copy2(FIXTURE / "benchmarks.json", tmp_path / "results")
    for kind, count in figures["counts"].items():
        lines = (ROOT / "results" / MACHINE / records.FILES[kind]).read_text().splitlines(keepends=True)
        (folder / records.FILES[kind]).write_text("".join(lines[:count]))
    return tmp_path / "results", figures


def figures_of(results_dir):
    """The same figures as the fixture's, computed by today's code."""
    folder = Path(results_dir) / MACHINE
    steps = history.steps(results_dir, MACHINE)
    # of each case, the measurement its verdict rests on (a flag not reproduced: what cleared it)
    rests = {id(c): history.chain_link(c) for s in steps for c in s["cases"]}
    out = {"steps": {f"{s['base']}..{s['head']}": {
        c["name"]: [c["verdict"], *(rests[id(c)][k] for k in ("ratio", "low", "high")), c["confirmed"]]
        for c in s["cases"]} for s in steps},
           "thresholds": records.calibration(folder)}
    runs = records.read(folder, "over-cpp")
    described = asv_files.suite(results_dir)
    versions = {n: b.get("version") for n, b in described.items()}
    out["over_cpp"] = {}
    for commit in dict.fromkeys(r["commit"] for r in runs):
        found = overcpp_read.over_cpp_cases([r for r in runs if r["commit"] == commit], runs, versions)
        out["over_cpp"][commit] = {n: [c["ratio"], c["low"], c["high"], c["over_ns"],
                                       spread and {k: v for k, v in spread.items() if k != "each"}]
                                   for n, (c, spread) in found.items()}
    loaded = [(m, d) for m, d in asv_files.load_all(results_dir) if d["commit_hash"].startswith("cb56ab9f9")]
    param_names = {n: b.get("param_names", []) for n, b in described.items()}
    rows = overview.overview_rows(loaded, {MACHINE: steps}, {}, param_names, {MACHINE: runs}, overview.suite_differs(),
                                  versions)
    # each case's paired chain to cb56ab9f9 along the steps of its one build, the 13.3.1 wheel, as the fixture's
    # figures hold it: (product, the commit it starts from, steps)
    commits = summary.order({c for s in steps for c in (s["base"], s["head"])}, asv_files.commits(ROOT / "results"))
    chains = history.chains(steps, commits)

    def index(name):
        found = chains.get(name, {}).get("13.3.1 wheel", {}).get(rows[0]["commit"])
        return [found[0], found[3], found[4]] if found and found[4] else None

    out["overview"] = {f"{r['benchmark']} {' '.join(r['case'])}": {
        api: [c.get("value"), c.get("net"), {k: v for k, v in c["step"].items() if k != "build"} if c.get("step")
              else None, index(c.get("case")), c.get("over_cpp_ns"), c.get("over_cpp_x")]
        for api, c in r["cells"].items()} for r in rows}
    return out


def same(a, b):
    """Equal, NaN equal to NaN (a skipped case's value)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(same, a, b))
    return a == b


def test_the_upgraded_history_reads_to_the_same_verdicts_intervals_thresholds_and_overview(tmp_path):
    results_dir, fixed = history_as_fixed(tmp_path)
    now = json.loads(json.dumps(figures_of(results_dir)))  # tuples as JSON has them
    for part in ("steps", "thresholds", "over_cpp", "overview"):
        assert now[part].keys() == fixed[part].keys(), part
        differ = [key for key in fixed[part] if not same(now[part][key], fixed[part][key])]
        assert not differ, (part, differ[:3])
    assert sum(len(c) for c in fixed["steps"].values()) > 800 and len(fixed["overview"]) > 40


def test_every_committed_record_is_of_the_current_schema():
    for folder in (ROOT / "results").iterdir():
        for kind, name in records.FILES.items():
            path = folder / name
            if path.exists():
                lines = [line for line in path.read_text().splitlines() if line.strip()]
                assert len(records.read(folder, kind)) == len(lines), path


def test_a_record_of_the_wrong_shape_is_left_out_with_a_line_and_a_good_one_is_read(tmp_path, capsys):
    good = json.loads((ROOT / "results" / MACHINE / records.FILES["calibration"]).read_text().splitlines()[0])
    wrong = [{**good, "thresholds": "1%"}, {**good, "settings": {**good["settings"], "layouts": "sideways"}},
             {k: v for k, v in good.items() if k != "date"}, {**good, "schema": 1}, ["not", "a", "record"]]
    (tmp_path / records.FILES["calibration"]).write_text(
        "".join(json.dumps(r) + "\n" for r in [*wrong, good]) + "{cut off\n")
    assert records.read(tmp_path, "calibration") == [good]
    said = capsys.readouterr().err.splitlines()
    # each named with what to do: the file as git has it, or that line deleted; an older schema, upgraded
    assert len(said) == len(wrong) + 1 and all(line.endswith(("or delete that line", "up to date)")) for line in said)
    assert "git checkout -- " in said[0]
    assert "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))" in said[5]  # whole
    assert ":1: record.thresholds is '1%', not a mapping" in said[0]
    assert "'sideways', not one of 'random', 'fixed'" in said[1] and "has no 'date'" in said[2]
    assert "cuda-bench upgrade" in said[3] and ":7: does not parse" in said[5]
    path = (tmp_path / records.FILES["calibration"]).resolve()
    noted = asv_files.noted(tmp_path)  # each line left out is noted: the commands exit 2 on it, the pages name it
    assert [(p, line) for p, line, _ in noted] == [(path, n) for n in (1, 2, 3, 4, 5, 7)]
    assert "does not parse" in noted[-1][2] and "not a mapping" in noted[0][2]
    asv_files.forget(tmp_path)
    assert asv_files.noted(tmp_path) == []


@pytest.mark.parametrize("threshold", [float("nan"), float("inf"), -0.5, 0, 0.004, "2%", None])
def test_a_threshold_that_is_not_a_sane_number_is_left_out_and_the_others_taken(tmp_path, threshold, capsys):
    """NaN, infinite, negative, zero, below the 1% floor, not a number: never a threshold. The highest sane
    threshold of a case over every calibration wins, not the newest."""
    base = {"base": "a", "head": "a", "date": "2026-12-05T00:00:00Z",
            "settings": {"layouts": "random", "confidence": 0.95, "cores": [1]}}
    for thresholds in ({"x": 0.03, "y": 0.02}, {"x": 0.012, "y": threshold}):
        records.append(tmp_path, "calibration", {**base, "thresholds": thresholds})
    assert records.calibration(tmp_path) == {"x": 0.03, "y": 0.02}
    assert "'s threshold" in capsys.readouterr().err


def test_a_case_noisier_than_any_threshold_keeps_the_widest_not_the_default(tmp_path, capsys):
    """An A/A interval that reaches past 50% calibrates to the 50% cap, and a threshold above it (written by hand)
    reads as the cap: the noisiest case never falls back to the 2% every uncalibrated case gets."""
    from cuda_bench.foundations import stats

    wide = {"name": "y", "ratio": 1.1, "low": 0.7, "high": 1.6, "control": False}
    assert stats.calibrate([wide]) == {"y": stats.MAX_THRESHOLD}
    base = {"base": "a", "head": "a", "date": "2026-12-05T00:00:00Z",
            "settings": {"layouts": "random", "confidence": 0.95, "cores": [1]}}
    records.append(tmp_path, "calibration", {**base, "thresholds": {"y": 0.9}})
    assert records.calibration(tmp_path) == {"y": stats.MAX_THRESHOLD}
    assert "read as 0.5" in capsys.readouterr().err


def test_upgrade_brings_schema_1_records_to_the_current_schema_and_keeps_their_numbers(tmp_path):
    """Schema 1 read missing fields through fallbacks; the upgrade writes them out once: a step's layouts (one per
    build where the workers said so or the record does not say), its machine start (boot id, else boot time),
    its bindings (from the versions both sides ran), an over-C++ run's state and twins."""
    step = {"kind": "step", "base": "a", "head": "b", "base_rev": "a", "head_rev": "b", "date": "d", "seconds": 1,
            "build_seconds": None, "command": None, "machine": {}, "expected": [], "skipped": {}, "only": {},
            "errors": {}, "versions": {"base": {"cuda-bindings": "13.3.1"}, "head": {"cuda-bindings": "13.3.1"}},
            "host": {"boot": "2026-12-04T10:00:00Z"}, "release_tags": None,
            "settings": {"aslr_off": True, "layouts": "random", "confidence": 0.95, "cores": [1]},
            "cases": [{"name": "c", "ratio": 1.0, "low": 0.99, "high": 1.01, "verdict": "same", "threshold": 0.02,
                       "coverage": 0.95, "pairs": [1.0], "base_ns": 1.0, "head_ns": 1.0, "groups": 3,
                       "calls_per_sample": 100, "control": False}]}
    (tmp_path / records.FILES["step"]).write_text(json.dumps(step) + "\n")
    (tmp_path / "overhead.jsonl").write_text(json.dumps(
        {"kind": "overhead", "commit": "b", "rev": "b", "date": "d", "seconds": 1, "build_seconds": 1, "command": None,
         "machine": {}, "versions": {}, "skipped": {}, "errors": {}, "settings": {"aslr_off": False, "processes": 2},
         "cases": [{"name": "c", "twin": "t", "ratio": 2.0, "low": 1.9, "high": 2.1, "coverage": 0.95, "over_ns": 9,
                    "over_low": 8, "over_high": 10, "py_ns": 19, "cpp_ns": 10, "processes": 2, "groups": 6}]}) + "\n")
    assert records.read(tmp_path, "step") == []  # schema 1: not read until upgraded
    assert records.upgrade(tmp_path) == {records.FILES["step"]: 1, records.FILES["over-cpp"]: 1}
    (new_step,) = records.read(tmp_path, "step")
    assert new_step["settings"]["layouts"] == "fixed" and new_step["host"]["start"] == "2026-12-04T10:00:00Z"
    assert new_step["bindings"] == "13.3.1" and new_step["lost"] == {} and new_step["cases"] == step["cases"]
    (run,) = records.read(tmp_path, "over-cpp")
    assert run["settings"]["state"] == "all" and run["settings"]["layouts"] == "fixed" and run["twins"] is None
    assert run["cases"][0]["ratio"] == 2.0 and run["cases"][0]["version"] is None
    assert not (tmp_path / "overhead.jsonl").exists()
    assert records.upgrade(tmp_path) == {records.FILES["step"]: 0, records.FILES["over-cpp"]: 0}

    # a line that is no record in any file: nothing is written, in that file or any other
    (tmp_path / records.FILES["step"]).write_text(json.dumps(step) + "\n")
    (tmp_path / records.FILES["over-cpp"]).rename(tmp_path / "overhead.jsonl")
    (tmp_path / "overhead.jsonl").write_text((tmp_path / "overhead.jsonl").read_text() + "{not json\n")
    with pytest.raises(records.RecordError, match=r"overhead\.jsonl:2 does not parse"):
        records.upgrade(tmp_path)
    assert (tmp_path / records.FILES["step"]).read_text() == json.dumps(step) + "\n"
    assert (tmp_path / "overhead.jsonl").exists() and not (tmp_path / records.FILES["over-cpp"]).exists()


def test_a_results_file_that_does_not_parse_is_left_out_with_a_line_naming_it(tmp_path, capsys):
    folder = tmp_path / MACHINE
    shutil.copytree(FIXTURE / MACHINE, folder)
    good = next(folder.glob("cb56ab9f*.json"))
    (folder / "deadbeef-cut.json").write_text(good.read_text()[:500])  # a write cut off
    (folder / "feedface-shape.json").write_text(json.dumps({"commit_hash": "f" * 40, "results": []}))
    loaded = asv_files.load_all(tmp_path)
    assert [d["commit_hash"][:9] for _, d in loaded] == ["cb56ab9f9"]
    said = capsys.readouterr().err
    assert f"skipping {folder / 'deadbeef-cut.json'}" in said and f"skipping {folder / 'feedface-shape.json'}" in said
    noted = {(p.name, line): why for p, line, why in asv_files.noted(tmp_path)}
    assert noted.keys() == {("deadbeef-cut.json", 1), ("feedface-shape.json", None)}
    assert noted[("deadbeef-cut.json", 1)].startswith("does not parse (")
    assert asv_files.shown(folder / "deadbeef-cut.json", tmp_path) == f"{tmp_path.name}/{MACHINE}/deadbeef-cut.json"
    # each results file that could not be read, by the commit commits.json names for its first 8 hex digits
    assert set(asv_files.unreadable_results(tmp_path, MACHINE, {"deadbeef" + "0" * 32: {}})) == {"deadbeef" + "0" * 32,
                                                                                               "f" * 40}
    asv_files.forget(tmp_path)
