"""What the read layer (``cuda_bench.publish.read``) leaves out of a history, and how it says so: a median no
measurement can be, a results file of a commit ``results/commits.json`` lacks, a file the parser stops in, a budgets
file that cannot be read. Each is named (file, and its line or case) with what to do, the command exits 2, and the pages
and the Markdown carry a banner; the rest of the history is shown as it is.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest
from conftest import ROOT

from cuda_bench import cli
from cuda_bench.publish import asv_plugin, read
from cuda_bench.publish.pages import landing as landing_page
from cuda_bench.publish.pages import steps as steps_page
from cuda_bench.results import asv_files, budgets

MACHINE = "nvidia-h200"
HEAD = "cb56ab9f9ae3b4a0ef19666697336945925589a5"  # main's head in the committed history
SET_CURRENT = "bench_device.SetCurrent.time_set_current"


@pytest.fixture
def history(tmp_path):
    """A copy of the committed history, and main's head's results file there (the build the pages show)."""
    results_dir = tmp_path / "results"
    shutil.copytree(ROOT / "results", results_dir)
    (head_file,) = (results_dir / MACHINE).glob(f"{HEAD[:8]}-*BINDINGSsource*.json")
    asv_files.forget()
    yield results_dir, head_file
    asv_files.forget()


def set_medians(path, benchmark, medians):
    """Put ``medians`` ({index of the case: value}) into ``benchmark``'s row of the results file at ``path``."""
    data = json.loads(path.read_text())
    at = data["result_columns"].index("result")
    for i, value in medians.items():
        data["results"][benchmark][at][i] = value
    path.write_text(json.dumps(data))  # NaN and Infinity as Python's json (and asv's) write them


def test_a_median_no_measurement_can_be_is_named_with_its_case_and_the_rest_is_shown(history, capsys):
    """A negative median, a NaN beside the case's statistics and an infinite one in main's head's results file:
    `report` exits 2, names each (file, case) with what to do, the Markdown and the front page say "unreadable" in
    their cells under a banner naming them, never "-500 ns" and never the silence of a skip; a NaN without
    statistics (asv's own "skipped") is no fault, and every other cell keeps its number."""
    results_dir, head_file = history
    set_medians(head_file, SET_CURRENT, {0: -5e-7, 1: math.nan, 2: math.inf})  # core, bindings, cupy
    status = cli.main(["report", "--results", str(results_dir)])
    out, err = capsys.readouterr()
    assert status == 2, err
    cases = [f"{SET_CURRENT}('{api}')" for api in ("core", "bindings", "cupy")]
    for case, value in zip(cases, ("-5e-07", "nan", "inf")):
        assert f"results: {head_file}: {case}: asv's median is {value}, which no measurement can be" in err
        assert f"> - `results/{MACHINE}/{head_file.name}`, case {case}: asv's median is {value}" in out
    assert err.count("or measure that commit again (`cuda-bench window COMMIT`)") == 3
    assert "-500 ns" not in out and "asv unreadable" in out
    found = read.load(results_dir)
    assert [(p.name, line) for p, line, _ in found.unreadable] == [(head_file.name, c) for c in cases]
    (row,) = [r for r in found.rows if r["machine"] == MACHINE and r["benchmark"] == SET_CURRENT]
    cells = [row["cells"][api] for api in ("core", "bindings", "cupy")]
    assert all(cell["unreadable"] and cell["value"] is None for cell in cells)
    others = [r for r in found.rows if r["machine"] == MACHINE and r["benchmark"] != SET_CURRENT]
    assert not any(c.get("unreadable") for r in others for c in r["cells"].values())
    assert sum(isinstance(c["value"], float) and c["value"] > 0 for r in others for c in r["cells"].values()) > 100
    page = landing_page.document(found)
    assert page.count(f"case {SET_CURRENT}(") == 3 and 'class="alert alert-warning unreadable"' in page
    assert "asv unreadable" in page and "-500 ns" not in page


def test_asvs_own_graphs_draw_no_point_for_a_median_no_measurement_can_be_nor_a_commit_commits_json_lacks(history):
    """asv publish reads the results files itself, through the plugin's reader: an impossible median is drawn as
    asv draws a failed case, no point, a skip (NaN without statistics) stays a skip, and a results file of a
    commit results/commits.json lacks is not read at all."""
    from asv.results import iter_results

    results_dir, head_file = history
    set_medians(head_file, SET_CURRENT, {0: -5e-7, 1: math.nan})
    stray = head_file.with_name(f"{'f' * 8}-{head_file.name.split('-', 1)[1]}")
    stray.write_text(json.dumps(json.loads(head_file.read_text()) | {"commit_hash": "f" * 40}))
    asv_plugin.READ.clear()
    read_by_asv = list(asv_plugin.one_line_per_case(iter_results)(str(results_dir)))
    asv_plugin.READ.clear()
    assert "f" * 40 not in {found.commit_hash for found in read_by_asv}
    (head,) = [f for f in read_by_asv if f.commit_hash == HEAD and f.params["machine"] == MACHINE]
    assert head._results[SET_CURRENT][:2] == [None, None] and head._results[SET_CURRENT][2] > 0
    skipped = [k for k, v in head._results.items()
               if isinstance(v, list) and any(isinstance(x, float) and math.isnan(x) for x in v)]
    assert skipped  # asv's own skips, NaN without statistics, drawn as asv draws them


def test_a_results_file_of_a_commit_commits_json_lacks_is_named_and_never_drawn_into_the_chain(history, capsys):
    """A results file of a commit that results/commits.json does not hold, dated after main's head: named with the
    fix (`publish --repo` records it), exit 2; main's head is still the recorded one, no gap to measure runs through
    the stray commit, and the Steps page never names or links it."""
    results_dir, head_file = history
    stray = "f" * 40
    data = json.loads(head_file.read_text())
    path = head_file.with_name(f"{stray[:8]}-{head_file.name.split('-', 1)[1]}")
    path.write_text(json.dumps(data | {"commit_hash": stray, "date": data["date"] + 86_400_000}))
    status = cli.main(["report", "--results", str(results_dir)])
    out, err = capsys.readouterr()
    assert status == 2
    said = (f"its commit {stray[:9]} is not in commits.json; `cuda-bench publish --repo CLONE` records it there from "
            "a clone of cuda-python that has it")
    assert f"results: skipping {path}: {said}" in err and f"> - `results/{MACHINE}/{path.name}`: {said}" in out
    found = read.load(results_dir)
    machine = found.machines[MACHINE]
    assert stray not in {d["commit_hash"] for d in machine.runs} and stray not in found.known
    assert not any(stray in (base, head) for _, base, head in machine.gaps)
    assert machine.landing["head"]["commit"] == HEAD
    page = steps_page.document(found)
    assert stray[:8] in page.split("<h1>", 1)[0] and stray[:8] not in page.split("<h1>", 1)[1]  # named, not drawn
    assert [(p.name, line) for p, line, _ in found.unreadable] == [(path.name, None)]


def test_a_file_the_parser_stops_in_is_named_with_the_parsers_whole_message_and_what_to_do(history, capsys):
    """commits.json cut off and a step record's line cut off: each named with the parser's whole message (its line
    and column, not "Unterminated string starting at" alone), then what to do; the report exits 2."""
    results_dir, _ = history
    commits = results_dir / "commits.json"
    text = commits.read_text()
    commits.write_text(text[: text.index('"title": "') + 15])  # within the first title
    steps = results_dir / MACHINE / "steps.jsonl"
    lines = steps.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2][:60] + b"\n"
    steps.write_bytes(b"".join(lines))
    assert cli.main(["report", "--results", str(results_dir)]) == 2
    out, err = capsys.readouterr()
    (said,) = [line for line in err.splitlines() if "commits.json" in line]
    assert "does not parse (Unterminated string starting at: line 3 column 12 (char " in said
    assert "restore it from git (`git checkout -- " in said
    assert said.endswith("`cuda-bench publish --repo CLONE` then records the commits it lacks")
    (said,) = [line for line in err.splitlines() if f"{steps}:3:" in line]
    assert ": line 1 column " in said and said.endswith(", or delete that line")
    assert f"`results/{MACHINE}/steps.jsonl` line 3: does not parse (" in out


def test_a_budgets_file_that_cannot_be_read_leaves_a_banner_in_the_markdown_and_on_the_pages(
        history, tmp_path, monkeypatch, capsys):
    """The budgets file is part of what a page says: one that cannot be read makes `report` exit 2, and the
    Markdown and the front page name it, its line and what to do, on top."""
    results_dir, _ = history
    bad = tmp_path / "budgets.json5"
    bad.write_text("{\n  python_over_cpp: {\n    default_ns: -5,\n  }\n}")
    monkeypatch.setattr(budgets, "BUDGETS", bad)
    assert cli.main(["report", "--results", str(results_dir)]) == 2
    out = capsys.readouterr().out
    assert out.startswith("> **Part of the history could not be read**")
    assert "> - `budgets.json5` line 3: " in out and "mend it: docs/guide.md" in out
    page = landing_page.document(read.load(results_dir))
    assert "<code>budgets.json5</code> line 3: " in page.split("<h1>", 1)[0]


def test_a_step_record_with_a_ratio_or_time_no_measurement_can_have_is_named_and_left_out(history, capsys):
    """A paired step's ratio of 0 or a time per call below 0 is no measurement: the record's line is named (its
    field and why, and what to do) and left out, and the report exits 2."""
    results_dir, _ = history
    steps = results_dir / MACHINE / "steps.jsonl"
    lines = steps.read_text().splitlines(keepends=True)
    for number, change in ((1, {"ratio": 0.0}), (2, {"base_ns": -5.0})):
        record = json.loads(lines[number - 1])
        record["cases"][0] |= change
        lines[number - 1] = json.dumps(record) + "\n"
    steps.write_text("".join(lines))
    assert cli.main(["report", "--results", str(results_dir)]) == 2
    err = capsys.readouterr().err
    assert f"{steps}:1: record.cases[0].ratio is 0.0, not a positive number; restore it from git" in err
    assert f"{steps}:2: record.cases[0].base_ns is -5.0, not a positive number; restore it from git" in err
