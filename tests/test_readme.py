"""README.md's section "What the dashboard says today" (``cuda_bench.publish.readme``): written from the history by
``cuda-bench report --readme`` with the functions the pages are drawn with, never typed by hand. On the committed
history it is what README.md holds; on the dashboard tests' history (tests/fixtures/site) it says the known answers
``make.py`` put there. That its numbers are the pages' own, in a browser: ``test_dashboard.py``."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

from conftest import ROOT

from cuda_bench import cli
from cuda_bench.publish import read, readme

FIXTURE = Path(__file__).parent / "fixtures" / "site"
_spec = importlib.util.spec_from_file_location("site_fixture", FIXTURE / "make.py")
known_answers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(known_answers)
SHA = known_answers.SHA


def flat(text):
    """``text`` with its wrapping undone: one space between words."""
    return " ".join(text.split())


def test_readmes_section_is_what_the_committed_history_says():
    """README.md's "What the dashboard says today" is what ``cuda-bench report --readme`` writes from the
    committed results/: a number typed by hand, or results added without rewriting it, fails here."""
    text = (ROOT / "README.md").read_text()
    start, end = readme.bounds(text)
    assert text[start:end] == readme.section(read.load(ROOT / "results")) + "\n", \
        "README.md's 'What the dashboard says today' is stale: cuda-bench report --readme"


def test_report_readme_writes_the_section_and_nothing_else(tmp_path, monkeypatch, capsys):
    """``cuda-bench report --readme`` puts the section into README.md between its heading and the next one,
    prints it and says so; the rest of README.md stays as it was, and a second run finds nothing to write."""
    copy = tmp_path / "README.md"
    heading = "## What the dashboard says today\n\n"
    before, _, after = (ROOT / "README.md").read_text().partition(heading)
    after = after[after.index("\n## ") + 1:]  # the next section on
    copy.write_text(f"{before}{heading}- **Is main's head fine?** Yes: C++ 22 ns, cuda.core 488 ns.\n\n{after}")
    monkeypatch.setattr(readme, "README", copy)
    shutil.copytree(FIXTURE / "results", tmp_path / "results")

    assert cli.main(["report", "--readme", "--results", str(tmp_path / "results")]) == 0
    out, err = capsys.readouterr()
    section = readme.section(read.load(tmp_path / "results"))
    written = copy.read_text()
    assert written == f"{before}{heading}{section}\n{after}"
    assert out == section and f"{copy}: written" in err
    assert cli.main(["report", "--readme", "--results", str(tmp_path / "results")]) == 0
    assert "already up to date" in capsys.readouterr().err and copy.read_text() == written


def test_the_section_says_the_known_answers_of_the_fixture_history():
    """On the dashboard tests' history: main's head is not fine (a confirmed and a not yet confirmed regression
    open on main, two cases slower than at the newest release, one put down to the cuda-bindings the head was built
    with); the flag another start did not reproduce and the
    largest open slowdown, each with its interval and commits; SetCurrent's medians at the head, its chain to the
    newest release and the range of its medians; the release step's counts and its one speedup."""
    said = flat(readme.section(read.load(FIXTURE / "results")))
    m2, m3, m4 = (f"`{SHA[c][:9]}`" for c in ("m2", "m3", "m4"))
    assert f"**Is main's head fine?** No. On gpu-a, main's head {m4}" in said
    assert "regressions still open on main: 1 confirmed · 1 not yet confirmed." in said
    assert ("Against the newest release, cuda-core-v0.2.0: 2 slower · 0 faster · 8 same · 1 changed with cuda-bindings "
            "12.9.10 → 13.3.1.") in said
    assert "Open on main: 2 (1 confirmed)" in said
    assert (f"not reproduced on another machine start: `device.SetCurrent bindings` (`cuCtxSetCurrent`) ×1.030 "
            f"[1.020, 1.040] from {m2} to {m3} on gpu-a.") in said
    assert (f"The largest open slowdown: `event.EventCreate core` (`Device.create_event`, `EventOptions`) ×1.070 "
            f"[1.058, 1.082] from cuda-core-v0.2.0 to {m4} on gpu-a.") in said
    medians = known_answers.MEDIANS
    core = medians[("bench_device.SetCurrent.time_set_current", ("'core'",))]
    assert f"at {m4} on gpu-a: C++ 23 ns, cuda.bindings 204 ns, cuda.core {core[-1]} ns, CuPy 100 ns" in said
    assert "×0.800 [0.790, 0.810] at cuda-core-v0.2.0 from cuda-core-v0.1.0" in said
    # one build per commit: m3's medians are those of its cuda_bindings built from the commit (BUILDS)
    (again, _, scale, _), = known_answers.BUILDS
    shown = [v * scale if i == list(known_answers.COMMITS).index(again) else v for i, v in enumerate(core)]
    assert f"asv's medians along that last run go from {min(shown):.0f} ns to {max(shown):.0f} ns" in said
    assert "On gpu-a, cuda-core-v0.1.0 → cuda-core-v0.2.0: 0 slower · 1 faster · 13 same · 1 on one side only" in said
    assert "the largest speedup `device.SetCurrent core` (`Device.set_current`) ×0.800 [0.790, 0.810]" in said
    assert "largest slowdown" not in said


def outside_the_section(text):
    """README.md without its generated section (what the history says, with counts of its own)."""
    start, end = readme.bounds(text)
    return text[:start] + text[end:]


def test_readme_says_what_is_needed_then_a_command_to_run_within_its_first_25_lines():
    """A newcomer reads what the commands need (a GPU, the time a build takes, the disk) and then a command to
    type, before line 25."""
    lines = (ROOT / "README.md").read_text().splitlines()
    first = next(i for i, line in enumerate(lines, 1) if line.startswith("```bash")) + 1
    assert first <= 25 and lines[first - 1].startswith("./scripts/")
    before = "\n".join(lines[:first])
    assert all(word in before for word in ("GPU", "Time:", "Disk:", "min", "GB"))


def test_readme_has_one_case_count_and_it_is_the_suites():
    """Every "N cases" README.md says (outside the generated section, whose counts are a step's) is the suite's
    count of cases, as asv and the paired engine find them: a case added to the suite and not to README fails."""
    from cuda_bench.foundations import suite

    said = re.findall(r"\b(\d+) cases\b", outside_the_section((ROOT / "README.md").read_text()))
    assert said and set(said) == {str(len(suite.cases()))}


def test_readmes_exit_status_table_is_the_one_cuda_bench_help_lists():
    """README.md's exit-status table and `cuda-bench --help` say the same statuses in the same words
    (``status.MEANINGS``, the one place they are written)."""
    from cuda_bench.foundations import status

    text = (ROOT / "README.md").read_text()
    table = text[text.index("| status | meaning |"):]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", table[:table.index("\n\n")], re.M)
    assert {int(code): meaning for code, meaning in rows} == status.MEANINGS
    assert status.described() in " ".join(cli.parser().format_help().split())
