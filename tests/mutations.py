"""Put known bugs back, one at a time, and check that a test fails for each: the tests guard the method.

    .venv/bin/python tests/mutations.py [--only NAME] > docs/evidence/mutations/output.txt

Each mutation replaces one piece of code (a bug that was once there, or that a change could bring) in a
scratch copy of the committed tree (``git worktree``), runs the tests named for it there, and reports whether
they caught it. The copy goes when the script ends; the checkout is never touched. Exit status 1 when a
mutation is not caught.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DASHBOARD = "tests/test_dashboard.py::"
UNREADABLE_REPORT = "test_report_names_what_it_could_not_read_and_exits_2_unless_a_regression_outranks_it"
INTERRUPTED_BUILD = "test_a_build_interrupted_in_pip_wheel_leaves_no_temporary_folder_and_no_cache_entry"
SIDEWAYS = DASHBOARD + "test_no_page_scrolls_sideways_at_1400_or_800_px_and_the_bar_stays_put"
README_SAYS = "tests/test_readme.py::test_readmes_section_is_what_the_committed_history_says"
EDGES = "tests/test_edges.py"  # the edges of a history the fixture histories do not reach
REPORT = "tests/test_report.py::"
STRUCTURE = "tests/test_structure.py::"
NAMED_ONCE = "test_each_part_of_the_history_that_cannot_be_read_is_named_once_however_often_it_is_read"
TEMPORARY_FOLDERS = "test_a_test_run_leaves_only_the_newest_runs_failed_tests_temporary_folders"
LIMIT = ("tests/test_build.py::test_a_build_longer_than_asvs_limit_goes_on_while_it_compiles_and_one_that_hangs_is_"
         "named_timed_out")
ASV_INTERRUPTED = "tests/test_environments.py::test_asv_run_interrupted_in_a_build_says_one_line_and_exits_130"
BUDGETS = "tests/test_budgets.py::"
BISECT = "tests/test_bisect.py"
COLD = "tests/test_coldstart.py::"
BUILDTIME = "tests/test_buildtime.py::"
COLD_PAGES = "tests/test_coldstart_pages.py::"
GATE_BUDGET = BUDGETS + "test_the_gate_fails_on_a_call_the_change_took_over_its_budget_and_on_no_other"

#: (name, file, the code as it is, the code with the bug, the tests that must catch it: files or test ids)
MUTATIONS = [
    ("verdict with a threshold of 0", "cuda_bench/stats.py",
     "verdict(low, high, threshold)\n    return CaseResult", "verdict(low, high, 0)\n    return CaseResult",
     ["tests/test_paired.py"]),
    ("a 100% threshold for every case", "cuda_bench/stats.py",
     "verdict(low, high, threshold)\n    return CaseResult", "verdict(low, high, 1.0)\n    return CaseResult",
     ["tests/test_paired.py"]),
    ("the engine ignores the calibrated thresholds", "cuda_bench/paired.py",
     "threshold = thresholds.get(name, stats.DEFAULT_THRESHOLD)", "threshold = stats.DEFAULT_THRESHOLD",
     ["tests/test_paired.py"]),
    ("A then B sampling instead of A B B A", "cuda_bench/paired.py",
     "        b2 = b.sample(calls)\n        a2 = a.sample(calls)\n", "        b2, a2 = b1, a1\n",
     ["tests/test_paired.py"]),
    ("the mean of a pair's groups instead of their median", "cuda_bench/stats.py",
     "return statistics.median(group_ratio(*g) for g in groups)",
     "return statistics.mean(group_ratio(*g) for g in groups)", ["tests/test_paired.py"]),
    ("the mean over process pairs instead of the median", "cuda_bench/stats.py",
     "return statistics.median(xs), xs[k - 1], xs[n - k], coverage",
     "return statistics.mean(xs), min(xs[k - 1], statistics.mean(xs)), max(xs[n - k], statistics.mean(xs)), coverage",
     ["tests/test_paired.py"]),
    ("the newest calibration wins instead of the highest", "cuda_bench/records.py",
     "out[name] = max(threshold, out.get(name, 0))", "out[name] = threshold", ["tests/test_records.py"]),
    ("a NaN or infinite threshold is taken", "cuda_bench/records.py",
     "if not _number(threshold) or threshold < MIN_THRESHOLD:",
     "if threshold is None or isinstance(threshold, str) or threshold < MIN_THRESHOLD:",
     ["tests/test_records.py"]),
    ("a threshold below the floor (-0.5) is clamped up to it instead of refused", "cuda_bench/records.py",
     "            if not _number(threshold) or threshold < MIN_THRESHOLD:",
     "            threshold = max(threshold, MIN_THRESHOLD) if _number(threshold) else threshold\n"
     "            if not _number(threshold):",
     ["tests/test_records.py"]),
    ("a threshold above 50 % is taken as it is", "cuda_bench/records.py",
     "                threshold = MAX_THRESHOLD\n", "                pass\n", ["tests/test_records.py"]),
    ("summary.json drops the lost pairs", "cuda_bench/compare.py",
     '"errors": report.errors,\n        "lost": report.lost,', '"errors": report.errors,\n        "lost": {},',
     ["tests/test_paired.py", "tests/test_workflows.py"]),
    ("pairs that skip a case partly are recorded as skipped", "cuda_bench/paired.py",
     'if kinds == {"skip"}:', 'if "skip" in kinds:', ["tests/test_paired.py"]),
    ("a results file that does not parse is dropped without a line", "cuda_bench/results.py",
     '            warn(f"skipping {path}: {exc}")\n', "            pass\n", ["tests/test_records.py"]),
    ("a record of the wrong shape is read as if it were right", "cuda_bench/records.py",
     "            records.append(check(found, kind))", "            records.append(found)",
     ["tests/test_records.py"]),
    ("a reinstall from asv's cache lacks the bindings wheel", "cuda_bench/wheels.py",
     'record["packages"][package]["wheels"] = download(out, wanted)', "pass",
     ["tests/test_environments.py"]),
    ("a measured value is replaced by a later skip", "cuda_bench/asv_kept.py",
     "        kept = keep_measured(old, new)\n", "        kept = []\n", ["tests/test_environments.py"]),
    ("a run without a GPU writes into the configured results", "cuda_bench/asv_plugin.py",
     "    if not gpu and Path(conf.results_dir).resolve() != elsewhere:", "    if False:",
     ["tests/test_environments.py"]),
    ("publish loses html/ when the new one cannot take its place", "cuda_bench/publish.py",
     "        if had:\n            aside.rename(html_dir)\n        raise", "        raise",
     ["tests/test_publish.py"]),
    ("an interrupt leaves the pair drivers and their workers running", "cuda_bench/process.py",
     "            os.killpg(worker.pid, signal.SIGKILL)", "            pass",
     ["tests/test_interrupts.py"]),
    ("an interrupt leaves the pair drivers running, and they outlive the command", "cuda_bench/process.py",
     "        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG",
     "        pass", ["tests/test_interrupts.py"], "an interrupt leaves the pair drivers and their workers running"),
    ("a command's error exits 1, as a regression does", "cuda_bench/status.py",
     "OK, REGRESSION, INCOMPLETE, ERROR, INTERRUPTED = 0, 1, 2, 3, 130",
     "OK, REGRESSION, INCOMPLETE, ERROR, INTERRUPTED = 0, 1, 2, 1, 130",
     ["tests/test_bench_cli.py"]),
    ("asv's step detection on medians feeds its Benchmark list", "cuda_bench/publish.py",
     "    asv_site.median_summaries(html_dir, found.runs, revisions)\n", "",
     ["tests/test_dashboard.py"]),
    ("a release appears by its hash", "cuda_bench/results.py",
     "return release_name(known.get(commit) or {}) or commit[:9]", "return commit[:9]", ["tests/test_dashboard.py"]),
    ("asv's graphs take a tag's name as HTML", "cuda_bench/asv_plugin.py",
     "return {html.escape(tag): sha for", "return {tag: sha for",
     [DASHBOARD + "test_every_page_shows_text_it_did_not_write_literally_and_injects_nothing"]),
    ("asv's graphs break where the cuda-bindings environment changes", "cuda_bench/asv_plugin.py",
     "                found._env_vars = {}\n", "                pass\n", ["tests/test_dashboard.py"]),
    ("a paired step walked backwards multiplies the chain", "cuda_bench/summary.py",
     'links.setdefault(head, []).append(\n                (at[base], base, 1 / case["ratio"],',
     'links.setdefault(head, []).append(\n                (at[base], base, case["ratio"],',
     ["tests/test_dashboard.py"]),
    ("the front page's badges come from the newest release's step to the head", "cuda_bench/overview.py",
     'main_steps = [s for s in steps if summary.step_kind(s, known) == "main"]',
     "main_steps = steps", ["tests/test_dashboard.py"]),
    ("a flag another machine start did not reproduce stays open", "cuda_bench/summary.py",
     '    if case["verdict"] == "regression":\n        return "confirmed"',
     '    if case["verdict"] in ("regression", "not reproduced"):\n        return "confirmed"',
     ["tests/test_dashboard.py"]),
    ("a step's work is diffed against a count made in another environment", "cuda_bench/summary.py",
     "    if not versions and found:  # no environment asked for: the newest record's\n", "    if found:\n",
     ["tests/test_dashboard.py"]),
    ("work is called unchanged where CUDA calls were not counted at both commits", "cuda_bench/counts_read.py",
     "    if uncounted and not missing:", "    if False:", ["tests/test_counts.py"]),
    ("asv compare gives a verdict when no case was measured on both sides", "cuda_bench/asv_plugin.py",
     "        if not both:\n            say(", "        if False:\n            say(", ["tests/test_environments.py"]),
    ("a step's summary is not written before its record", "cuda_bench/steps.py",
     "# first: the measurement is kept whatever happens to the history\n            compare.write(out, data)",
     "# first: the measurement is kept whatever happens to the history\n            pass",
     ["tests/test_bench_cli.py"]),
    ("run does not check its revisions before it builds", "cuda_bench/commands/run.py",
     "measuring = asvrun.check_revisions(run.repo, asvrun.range_of(rest))", "measuring = None",
     ["tests/test_bench_cli.py"]),
    ("an interrupt waits for the builds instead of stopping them", "cuda_bench/process.py",
     "            os.killpg(proc.pid, signal.SIGTERM)\n", "            proc.wait()\n",
     ["tests/test_build.py::test_a_build_that_fails_or_is_interrupted_stops_the_builds_beside_it"]),
    ("pip wheel's temporary folders go to the system's, where an interrupt leaves them", "cuda_bench/wheels.py",
     ' | {"TMPDIR": str(scratch)}\n', "\n", ["tests/test_build.py::" + INTERRUPTED_BUILD]),
    ("a SIGTERM kills the build step without stopping pip or removing its half-made entry", "cuda_bench/build.py",
     "    signal.signal(signal.SIGTERM, _interrupted)", "    pass", ["tests/test_build.py::" + INTERRUPTED_BUILD]),
    # what could not be read is never left out silently
    ("a command that could not read part of the history exits as if it had", "cuda_bench/cli.py",
     "        return with_unreadable(status)", "        return status", [DASHBOARD + UNREADABLE_REPORT]),
    ("a record's line that cannot be read is left out without a note", "cuda_bench/records.py",
     "            if results.unreadable(path, exc, number, results.touches(raw)):\n", "            if True:\n",
     ["tests/test_records.py"]),
    ("a results file that cannot be read is skipped without a note", "cuda_bench/results.py",
     '        if unreadable(path, exc):\n            warn(f"skipping {path}: {exc}")\n',
     '        warn(f"skipping {path}: {exc}")\n', ["tests/test_records.py"]),
    ("the pages carry no banner for what could not be read", "cuda_bench/pages/html.py",
     "    return unreadable_html(found.unreadable, found.results_dir, found.known)", '    return ""',
     [DASHBOARD + "test_what_could_not_be_read_is_named_on_every_page_and_publish_exits_2"]),
    ("publish exits 0 when part of the history could not be read", "cuda_bench/publish.py",
     '    return 2 if results.say_unreadable("publish") else 0', "    return 0",
     [DASHBOARD + "test_what_could_not_be_read_is_named_on_every_page_and_publish_exits_2"]),
    ("the commit before a head whose results cannot be read is shown as main's head", "cuda_bench/summary.py",
     "    if lost is None or lost in measured:", "    if True:",
     [DASHBOARD + "test_a_head_whose_results_file_cannot_be_read_is_named_not_replaced"]),
    # every page escapes what it did not write
    ("a commit's title goes into its link's title unescaped", "cuda_bench/pages/html.py",
     """    title = f' title="{esc(info["title"])}"' if info.get("title") else \"\"""",
     """    title = f' title="{info["title"]}"' if info.get("title") else \"\"""",
     ["tests/test_dashboard.py::test_every_page_shows_text_it_did_not_write_literally_and_injects_nothing"]),
    ("main's head's title goes into the front page unescaped", "cuda_bench/pages/landing.py",
     """    title = f" “{esc(head['title'])}”" if head["title"] else \"\"""",
     """    title = f" “{head['title']}”" if head["title"] else \"\"""",
     ["tests/test_dashboard.py::test_every_page_shows_text_it_did_not_write_literally_and_injects_nothing"]),
    ("a step's error message goes into the Steps page unescaped", "cuda_bench/pages/steps.py",
     'f"</td><td {WIDE}>{esc(text)}</td></tr>"', 'f"</td><td {WIDE}>{text}</td></tr>"',
     ["tests/test_dashboard.py::test_every_page_shows_text_it_did_not_write_literally_and_injects_nothing"]),
    ("graph.js gives flot the commit names as HTML", "dashboard/site/graph.js",
     "return [i, escaped(c.name)];", "return [i, c.name];",
     ["tests/test_dashboard.py::test_the_graph_page_takes_what_its_data_says_as_text"]),
    ("a patch of asv's code comes back (the title of asv's list's change column)",
     "cuda_bench/pages/asv_site.py",
     '    (html_dir / "index.html").rename(html_dir / "asv.html")\n',
     '    (html_dir / "index.html").rename(html_dir / "asv.html")\n'
     '    listing = html_dir / "summarylist.js"\n'
     '    listing.write_text(listing.read_text().replace("Recent change", "Paired change"))\n',
     [DASHBOARD + "test_asvs_files_are_published_as_asv_ships_them_but_for_their_asset_addresses"]),
    ("opened from disk, the link to asv's pages opens a page that cannot load",
     "dashboard/site/site.js",
     "    if (window.location.protocol !== 'file:') {", "    if (true) {",
     [DASHBOARD + "test_opened_from_disk_the_link_to_asvs_pages_says_how_to_serve_them"]),
    ("graph.js writes the commits' titles as HTML", "dashboard/site/graph.js",
     "$('<td/>').text(c.title)", "$('<td/>').html(c.title)",
     ["tests/test_dashboard.py::test_the_graph_page_takes_what_its_data_says_as_text"]),
    # no page scrolls sideways at 1,400 or 800 px (the fixture history and the committed one)
    ("the front page keeps each operation's name and calls on one line", "dashboard/site/site.css",
     ".overview td:not(:first-child) { white-space: nowrap; }", ".overview td { white-space: nowrap; }",
     [SIDEWAYS]),
    ("a code chip never breaks", "dashboard/site/site.css",
     "main code { white-space: normal; overflow-wrap: anywhere; }", "main code { }", [SIDEWAYS]),
    ("the Regressions table keeps its seven columns on a narrow window", "dashboard/site/site.css",
     "@media (max-width: 991px) {", "@media (max-width: 0px) {", [SIDEWAYS]),
    ("a ratio and its interval wrap", "dashboard/site/site.css",
     "table.changed td:nth-child(2), table.regressions td:nth-child(3), td.per-call .times,",
     "td.per-call .times,", [SIDEWAYS]),
    ("a pair of times per call wraps", "dashboard/site/site.css",
     "table.regressions td:nth-child(3), td.per-call .times,", "table.regressions td:nth-child(3),",
     [SIDEWAYS]),
    ("the times per call are one text, with nothing to keep them whole", "cuda_bench/pages/html.py",
     """return f'<span class="times">{esc(pair)}</span>{esc(paren + rest)}'""",
     "return esc(pair + paren + rest)", [SIDEWAYS]),
    ("a commit's name breaks at its hyphens", "dashboard/site/site.css",
     "main a.commit { white-space: nowrap; }", "main a.commit { }", [SIDEWAYS]),
    ("a step's date breaks at its hyphens", "dashboard/site/site.css",
     "table.steps tr[data-base] > td:nth-child(2) { white-space: nowrap; }",
     "table.steps tr[data-base] > td:nth-child(2) { }", [SIDEWAYS]),
    ("the graph's commit dates break at their hyphens", "dashboard/site/site.css",
     "#graph-commits td:nth-child(4) { white-space: nowrap; }", "#graph-commits td:nth-child(4) { }",
     [SIDEWAYS]),
    ("a graph's cuda-bindings label runs past the plot's right edge", "dashboard/site/graph.js",
     "if (at.left + 4 + mark.outerWidth() > placeholder.width()) {", "if (false) {", [SIDEWAYS]),
    # README.md's "What the dashboard says today", written from the history
    ("README's section holds a line typed by hand", "README.md",
     "## What the dashboard says today\n\n",
     "## What the dashboard says today\n\nOn the H200, `Device.set_current` takes 22 ns from C++.\n\n",
     [README_SAYS]),
    ("README's example gives each library's number net of the floor, not the page's median",
     "cuda_bench/readme.py", """shown.append((TITLES[api], fmt(cell["value"]), "asv's medians"))""",
     """shown.append((TITLES[api], fmt(cell.get("net") or cell["value"]), "asv's medians"))""",
     ["tests/test_readme.py"]),
    ("README's example gives asv's median where the front page leads with the time in one process",
     "cuda_bench/readme.py", "        if one:\n            shown.append(",
     "        if False:\n            shown.append(",
     [README_SAYS, DASHBOARD + "test_readmes_numbers_are_what_the_pages_of_the_committed_history_show"]),
    ("report --readme prints the section and writes nothing", "cuda_bench/readme.py",
     "        path.write_text(new)\n", "        pass\n",
     ["tests/test_readme.py::test_report_readme_writes_the_section_and_nothing_else"]),
    ("report --readme writes over what follows the section", "cuda_bench/readme.py",
     'end = text.index("\\n## ", start) + 1', "end = len(text)",
     ["tests/test_readme.py::test_report_readme_writes_the_section_and_nothing_else"]),
    ("README calls a head fine with regressions open on main and slower than the newest release",
     "cuda_bench/readme.py",
     'if any(t["open"] for t in told) or any(p.get("regression") for p in parts):',
     'if any(p.get("regression") for p in parts[: len(told)]):',
     ["tests/test_readme.py::test_the_section_says_the_known_answers_of_the_fixture_history"]),
    # the numbers around a verdict: bands, time per call, dates, asv's list, regressions.json
    ("a chain point reached backwards has its band's ends swapped", "cuda_bench/summary.py",
     '1 / case["ratio"], 1 / case["high"], 1 / case["low"])\n',
     '1 / case["ratio"], 1 / case["low"], 1 / case["high"])\n', [EDGES]),
    ("asv's list keeps the commits where asv's step detection saw a change",
     "cuda_bench/pages/asv_site.py",
     "prev_value=None,\n                change_rev=None,\n", "prev_value=None,\n",
     [EDGES, DASHBOARD + "test_asvs_benchmark_list_shows_medians_alone_never_asvs_step_detection"]),
    ("asv's regressions.json names a step's revisions head first", "cuda_bench/pages/asv_site.py",
     "[[before, after, base_s,",
     "[[after, before, base_s,", [EDGES]),
    ("the pages' and the Markdown's dates are in the machine's time zone", "cuda_bench/text.py",
     "datetime.fromtimestamp(ms / 1000, timezone.utc).strftime(",
     "datetime.fromtimestamp(ms / 1000).strftime(", [EDGES]),
    ("a changed case's time per call is read as seconds, not ns", "cuda_bench/text.py",
     'said = f"{fmt_ns(base)} → {fmt_ns(head)}"', 'said = f"{fmt(base)} → {fmt(head)}"', [EDGES]),
    ("times per call whose quotient leaves the interval are shown without saying so", "cuda_bench/text.py",
     "    if case[\"low\"] <= quotient <= case[\"high\"]:\n        return said",
     "    if True:\n        return said", [EDGES, DASHBOARD[:-2]]),
    # ordering and tie-breaks: several tags on a commit, releases out of version order, a merge
    # with an older date, several steps into one head, several counts records
    ("a commit with several release tags is named by its oldest", "cuda_bench/results.py",
     "return tags[-1] if tags else None",
     "return tags[0] if tags else None", [EDGES]),
    ("release tags are ordered as text (v0.10.0 before v0.9.0)", "cuda_bench/results.py",
     "if is_release_tag(t)), key=release_version)",
     "if is_release_tag(t)))", [EDGES]),
    ("the newest release is the one committed last, not the highest version",
     "cuda_bench/summary.py",
     "newest = max(released, key=lambda c: release_version(tag(c, known)))",
     "newest = released[-1]", [EDGES]),
    ("the release ladder is listed by commit date, not by version", "cuda_bench/summary.py",
     'key=lambda s: release_version(head_release(s, known) or "cuda-core-v0.0.0"), reverse=True',
     'key=lambda s: place(s["head"], known), reverse=True', [EDGES]),
    ("main's head is the newest commit by date, not the furthest along main",
     "cuda_bench/summary.py",
     'return max(placed, key=lambda c: known[c]["position"])',
     "return max(placed, key=lambda c: place(c, known))", [EDGES]),
    ("of several steps into main's head, the one made last is its previous",
     "cuda_bench/summary.py",
     'step = max(into, key=lambda s: (place(s["base"], known), s["date"])) if into else None',
     "step = into[-1] if into else None", [EDGES]),
    ("the Regressions page lists the oldest step first", "cuda_bench/summary.py",
     'found.sort(key=lambda sc: sc[0]["date"], reverse=True)',
     'found.sort(key=lambda sc: sc[0]["date"])', [EDGES]),
    ("improvements are listed smallest change first", "cuda_bench/summary.py",
     'key=lambda c: c["ratio"])\n',
     'key=lambda c: -c["ratio"])\n', [EDGES]),
    ("of a commit's counts records, the oldest count of a case wins", "cuda_bench/summary.py",
     'if kept is None or case["cuda"] is not None or kept["cuda"] is None:',
     "if kept is None:", [EDGES]),
    ("a commit counted in two environments is read in its oldest record's", "cuda_bench/summary.py",
     'versions = found[-1]["versions"]',
     'versions = found[0]["versions"]', [EDGES]),
    # values exactly at a threshold, and just either side of it
    ("a median of exactly 1 µs reads 1000 ns", "cuda_bench/text.py",
     'f"{ns:.0f} ns" if ns < 1e3 else',
     'f"{ns:.0f} ns" if ns <= 1e3 else', [EDGES]),
    ("a median of exactly 1 ms reads 1000.00 µs", "cuda_bench/text.py",
     "if ns < 1e6 else",
     "if ns <= 1e6 else", [EDGES]),
    ("exactly 1 µs over C++ is called under the target", "cuda_bench/overcpp_read.py",
     '(" ✓" if cell["over_cpp_ns"] < TARGET_NS else " ✗")',
     '(" ✓" if cell["over_cpp_ns"] <= TARGET_NS else " ✗")', [EDGES]),
    ("the overview marks exactly 1 µs over C++ as under the target", "cuda_bench/pages/landing.py",
     'target = " over-ok" if cell["over_cpp_ns"] < TARGET_NS',
     'target = " over-ok" if cell["over_cpp_ns"] <= TARGET_NS', [EDGES]),
    ("a run exactly at the fast state's window is called slow", "cuda_bench/overcpp_read.py",
     "return factor is not None and factor > SLOW_STATE",
     "return factor is not None and factor >= SLOW_STATE", [EDGES]),
    ("a calibrated threshold exactly at the floor is refused", "cuda_bench/records.py",
     "if not _number(threshold) or threshold < MIN_THRESHOLD:",
     "if not _number(threshold) or threshold <= MIN_THRESHOLD:", [EDGES]),
    ("an interval whose low end is exactly 1 + threshold is a regression", "cuda_bench/stats.py",
     "if low > 1 + threshold:",
     "if low >= 1 + threshold:", [EDGES]),
    ("an interval whose high end is exactly 1 / (1 + threshold) is an improvement",
     "cuda_bench/stats.py",
     "if high < 1 / (1 + threshold):",
     "if high <= 1 / (1 + threshold):", [EDGES]),
    ("one over-C++ run is shown as a range", "cuda_bench/overcpp_read.py",
     'several = runs.get("runs", 0) > 1',
     'several = runs.get("runs", 0) >= 1', [EDGES]),
    # hostile text in a flagged case, in a step's lost pairs, in a line that cannot be read
    ("why a line could not be read goes into every page's banner unescaped",
     "cuda_bench/pages/html.py",
     'f"{esc(why)}{touched_words(',
     'f"{why}{touched_words(', [EDGES]),
    ("a Steps page row's case goes into its attribute unescaped", "cuda_bench/pages/steps.py",
     """f'<tr class="{kind}" data-case="{esc(name)}" {data}>""",
     """f'<tr class="{kind}" data-case="{name}" {data}>""", [EDGES, DASHBOARD[:-2]]),
    ("a flagged case's name goes into the Regressions page's attributes unescaped",
     "cuda_bench/pages/regressions.py",
     'data-case="{esc(case["name"])}" data-base=',
     'data-case="{case["name"]}" data-base=', [EDGES]),
    ("a flagged case's name goes into the feed's HTML unescaped", "cuda_bench/pages/regressions.py",
     'f"<p>{esc(case[\'name\'])} on {esc(machine)}: ',
     'f"<p>{case[\'name\']} on {esc(machine)}: ', [EDGES]),
    ("an open regression's case goes into the front page unescaped", "cuda_bench/pages/landing.py",
     'f\'<li data-case="{esc(c["name"])}" data-head=',
     'f\'<li data-case="{c["name"]}" data-head=', [EDGES]),
    # upgrade of schema-1 records that hold every optional field; a re-run after a version change
    ("upgrade drops a schema-1 step's lost pairs", "cuda_bench/records.py",
     '"lost": record.get("lost") or {},\n        "env"',
     '"lost": {},\n        "env"', [EDGES]),
    ("upgrade reads a step's bindings off its versions though the record names them",
     "cuda_bench/records.py",
     '"bindings": record.get("bindings") or _step_bindings(record)',
     '"bindings": _step_bindings(record)', [EDGES]),
    ("upgrade drops a release step's tags", "cuda_bench/records.py",
     '"release_tags": record.get("release_tags"),',
     '"release_tags": None,', [EDGES]),
    ("upgrade blanks each over-C++ case's version and fast count", "cuda_bench/records.py",
     '[{"version": None, "fast": None} | case for case',
     '[case | {"version": None, "fast": None} for case', [EDGES]),
    ("upgrade takes the boot time as the machine start though the record has the boot id",
     "cuda_bench/records.py",
     'host["start"] = host.get("boot_id") or host.get("boot")',
     'host["start"] = host.get("boot")', [EDGES]),
    ("upgrade reads a layout per process as one fixed layout", "cuda_bench/records.py",
     'settings.get("layouts") or "fixed"',
     '"fixed"', [EDGES]),
    # every number says which build made it (the library comparison in one process, one build per asv line, the
    # graphs' cuda-bindings changes, every flag on Regressions, pathfinder drawn, thresholds as used, words linked)
    ("the libraries are compared across processes, not within each", "cuda_bench/overcpp_read.py",
     'zip(case["process_ratios"], reference["process_ratios"])',
     'zip(case["process_ratios"], sorted(reference["process_ratios"]))',
     [REPORT + "test_each_form_is_compared_with_cuda_bindings_process_by_process"]),
    ("the front page does not say that the comparison and asv's medians ran other builds",
     "cuda_bench/pages/landing.py", 'if newest["bindings"] != first["build"]', "if False",
     [REPORT + "test_the_front_page_compares_the_libraries_in_one_process_on_each_machine_and_names_each_build"]),
    ("asv's graphs average a commit's two builds", "cuda_bench/asv_plugin.py",
     "                for found in best.values():\n", "                for found in iter_results(str(folder)):\n",
     [DASHBOARD + "test_a_commit_measured_in_two_builds_is_one_build_on_every_graph_and_page"]),
    ("the pages show the build measured last, not the commit's own", "cuda_bench/results.py",
     'return (bindings == "source", measured or 0)', "return (False, measured or 0)",
     [DASHBOARD + "test_a_commit_measured_in_two_builds_is_one_build_on_every_graph_and_page"]),
    ("the graphs' cuda-bindings line follows what was asked (auto), not the versions the builds ran",
     "cuda_bench/pages/graph.py", "installed.get((c, results.bindings_of(newest[c]))),", "None,",
     [DASHBOARD + "test_a_release_step_across_a_bindings_change_puts_its_bindings_rows_down_to_it"]),
    ("the graphs draw a flag put down to a cuda-bindings change as the commits' regression", "dashboard/site/graph.js",
     "return (f[8] ? 'put down' : f[1]) === verdict", "return f[1] === verdict",
     [DASHBOARD + "test_a_release_step_across_a_bindings_change_puts_its_bindings_rows_down_to_it"]),
    ("Regressions leaves out the slowdowns put down to a cuda-bindings change", "cuda_bench/pages/regressions.py",
     "out += put_down_html(machine, put_down, known)", "out += []",
     [DASHBOARD + "test_the_regressions_page_feed_and_json_say_what_the_records_hold"]),
    ("the graphs draw no cuda.pathfinder line", "dashboard/site/graph.js",
     "var ORDER = ['core', 'bindings', 'cupy', 'pathfinder', 'cpp'];",
     "var ORDER = ['core', 'bindings', 'cupy', 'cpp'];",
     [DASHBOARD + "test_pathfinder_is_drawn_on_the_front_page_and_in_its_graphs"]),
    ("the front page leaves cuda.pathfinder's rows blank", "cuda_bench/pages/landing.py",
     'lookups = [r for r in mrows if LOOKUPS in r["cells"]]', "lookups = []",
     [DASHBOARD + "test_pathfinder_is_drawn_on_the_front_page_and_in_its_graphs"]),
    ("a calibrated machine's pages hide that its steps used the default threshold", "cuda_bench/summary.py",
     "if calibrations and flat:", "if False:",
     [REPORT + "test_the_pages_say_which_thresholds_judged_each_machine_and_claim_no_calibration_not_used"]),
    ("the pages link no word to the glossary", "cuda_bench/pages/html.py", "body = linked(body)", "body = body",
     [DASHBOARD + "test_every_page_links_its_words_to_their_one_entry"]),
    ("a damaged step record's banner and step name nothing it is about", "cuda_bench/records.py",
     "results.unreadable(path, exc, number, results.touches(raw))", "results.unreadable(path, exc, number)",
     [EDGES + "::test_a_damaged_step_record_is_named_with_the_step_it_is_about"]),
    ("the Releases page shows a step rebuilt without a damaged record as whole", "cuda_bench/pages/releases.py",
     'damaged_html(damaged, told["base"], told["head"]),', '"",',
     [EDGES + "::test_a_damaged_step_record_is_named_with_the_step_it_is_about"]),
    # five bugs no test stated a rule for
    ("over C++ sums a group's two samples instead of averaging them", "cuda_bench/stats.py",
     "(p1 + p2 - c1 - c2) / 2 for", "(p1 + p2 - c1 - c2) for",
     [EDGES + "::test_python_over_cpp_is_the_mean_of_a_groups_two_samples_over_its_twins"]),
    ("the front page reads 'none' while only unconfirmed regressions are open", "cuda_bench/pages/landing.py",
     "        if opened\n", '        if any(c.get("confirmed") for _, c in opened)\n',
     [EDGES + "::test_the_front_page_marks_main_open_with_only_unconfirmed_regressions"]),
    ("commits.json dates commits in seconds, not ms", "cuda_bench/asvrun.py",
     '"date": int(date) * 1000,', '"date": int(date),',
     [EDGES + "::test_a_commits_date_is_recorded_in_ms_as_asv_dates_it"]),
    ("cuda_core's wheel cache key leaves out the cuda-bindings it was built against", "cuda_bench/trees.py",
     'if package == "cuda_core" and bindings:', "if False:",
     [EDGES + "::test_a_cuda_core_wheel_is_cached_per_cuda_bindings_it_was_built_against"]),
    ("a step's same count takes in its flags not reproduced", "cuda_bench/summary.py",
     '    found["not measured"] = len(',
     '    found["same"] += found["not reproduced"]\n    found["not measured"] = len(',
     [EDGES + "::test_a_steps_same_count_leaves_out_its_flags_not_reproduced"]),
    ("a re-run puts back a value measured under the benchmark's earlier version",
     "cuda_bench/asv_kept.py",
     'if not before or before[at["version"]] != row[at["version"]]:',
     "if not before:", [EDGES]),
    # what a test run, a build and an interrupt leave behind
    ("a command names a line it cannot read each time it reads it", "cuda_bench/results.py",
     "    new = key not in SAID\n", "    new = True\n", ["tests/test_plan.py::" + NAMED_ONCE]),
    ("a command's last lines name each part it could not read once more", "cuda_bench/results.py",
     "            file=sys.stderr,\n        )\n    return bool(found)",
     "            file=sys.stderr,\n        )\n        for path, line, why in found:\n"
     "            print(f\"  {path}{f':{line}' if line else ''}: {why}\", file=sys.stderr)\n    return bool(found)",
     ["tests/test_plan.py::" + NAMED_ONCE]),
    ("pytest keeps every passed test's temporary folder", "pyproject.toml",
     'tmp_path_retention_policy = "failed"\n', "", [STRUCTURE + TEMPORARY_FOLDERS]),
    ("pytest keeps three runs' temporary folders", "pyproject.toml",
     "tmp_path_retention_count = 1\n", "tmp_path_retention_count = 3\n", [STRUCTURE + TEMPORARY_FOLDERS]),
    ("a build that compiles past asv's limit, saying nothing to asv, is stopped as one that hangs",
     "cuda_bench/toolkit.py", "        if now - LAST_OUTPUT[0] >= HEARTBEAT:", "        if False:", [LIMIT]),
    ("a build stopped for its silence is said to have failed, not to have timed out", "cuda_bench/asvrun.py",
     '        if row.get("silent_seconds", 0) >= limit - 1:', '        if row.get("silent_seconds", 0) > 2 * limit:',
     [LIMIT]),
    ("an asv command interrupted in a build ends on asv's 'Interrupted.', exit 1", "cuda_bench/asv_plugin.py",
     '            if str(exc) != "Interrupted.":', "            if True:", [ASV_INTERRUPTED]),
    ("an interrupted asv command also says the build it stopped failed", "cuda_bench/asv_plugin.py",
     "            if klass.__name__ in WRITERS and status != INTERRUPTED:",
     "            if klass.__name__ in WRITERS:", [ASV_INTERRUPTED]),
    ("a command's temporary folder stays, and what pip left in it", "cuda_bench/cli.py",
     "        with process.temporary_folder():", '        with open("/dev/null"):',
     ["tests/test_build.py::test_a_commands_temporary_folder_goes_whole_with_what_the_processes_it_ran_left_there"]),
    ("prebuild names a failed build's log in a folder it removes", "cuda_bench/build.py",
     '    log_dir = Path(log_dir or toolkit.cache_root().parent / "prebuild-logs")',
     "    log_dir = Path(log_dir or work)",
     ["tests/test_build.py::test_an_interrupted_prebuild_says_one_line_keeps_the_log_it_names_and_leaves_no_"
      "temporary_folder"]),
    ("a budget verdict of 'over' on an interval whose low end is on the budget", "cuda_bench/budgets.py",
     "    if low > budget:", "    if low >= budget:",
     [BUDGETS + "test_a_verdict_needs_the_whole_interval_on_one_side_of_the_budget"]),
    ("a budget verdict of 'within' on an interval whose high end is on the budget", "cuda_bench/budgets.py",
     "    if high < budget:", "    if high <= budget:",
     [BUDGETS + "test_a_verdict_needs_the_whole_interval_on_one_side_of_the_budget"]),
    ("a budget verdict on too few processes for a 95 % interval", "cuda_bench/budgets.py",
     "    if coverage < confidence:\n        return UNDECIDED\n", "",
     [BUDGETS + "test_a_verdict_needs_the_whole_interval_on_one_side_of_the_budget"]),
    ("the gate passes a call the change took over its budget", "cuda_bench/compare.py",
     '    if regressions(data) or budgets.taken_over((data.get("budgets") or {}).get("judged", [])):',
     "    if regressions(data):", [GATE_BUDGET]),
    ("the gate fails a pull request on a call over its budget at the base too", "cuda_bench/budgets.py",
     '    return [j for j in over(judged) if j.get("base_verdict") in (WITHIN, UNDECIDED)]',
     "    return over(judged)", [GATE_BUDGET]),
    ("a budgets file that cannot be read is not noted (the command exits 0)", "cuda_bench/budgets.py",
     "        results.unreadable(path, exc, line)\n", "",
     [BUDGETS + "test_a_bad_file_is_one_line_naming_the_file_its_line_and_why_and_the_command_exits_2"]),
    ("the benchmark's budget wins over its case's", "cuda_bench/budgets.py",
     "        for key in operation_keys(name):", "        for key in operation_keys(name)[::-1]:",
     [BUDGETS + "test_the_more_particular_key_wins_and_each_kind_holds_its_forms"]),
    ("CuPy's forms are held to cuda-python's budgets", "cuda_bench/budgets.py",
     "if self.error or library(name) not in FORMS[kind]:", "if self.error:",
     [BUDGETS + "test_the_committed_file_reads_and_sets_cuda_pythons_target_for_every_twin"]),
    # which commit did it: the bisect's order of measurement and its stop rule
    ("the bisect measures a span that fits one block by halves all the same", "cuda_bench/bisect.py",
     "    if len(span) <= fits:", "    if len(span) <= 2:", [BISECT]),
    ("the bisect narrows to a quarter, not a half", "cuda_bench/bisect.py",
     "    return [span[0], span[(len(span) - 1) // 2], span[-1]]",
     "    return [span[0], span[(len(span) - 1) // 4], span[-1]]", [BISECT]),
    ("the bisect answers with a step that joins commits with others between", "cuda_bench/bisect.py",
     "            if len(sub) == 2:", "            if len(sub) <= 3:", [BISECT]),
    ("the bisect follows improvements and cases not asked for", "cuda_bench/bisect.py",
     '    return [c for c in paired.regressions(step) if cases is None or c["name"] in cases]',
     '    return [c for c in paired.counted(step) if c["verdict"] != "same"]', [BISECT]),
    ("the bisect calls a span spread where its steps' low ends chained stay within the threshold",
     "cuda_bench/bisect.py", "math.log(found[1]) > math.log1p(found[2]):", "math.log(found[0]) > math.log1p(found[2]):",
     [BISECT]),
    ("the bisect calls one unflagged step a spread change", "cuda_bench/bisect.py",
     "        if found and found[3] >= 2 and", "        if found and", [BISECT]),
    ("the bisect takes a flag that does not hold when narrowed for nothing found", "cuda_bench/bisect.py",
     "            elif why is not None:", "            elif False:", [BISECT]),
    ("the bisect pairs a base off head's first-parent line with main's next commit", "cuda_bench/commands/bisect.py",
     "    if parent != span[0]:", "    if False:", [BISECT]),
    ("the gate fails identical builds on a budget verdict the two runs' noise moved", "cuda_bench/budgets.py",
     "    if identical:", "    if False:",
     [BUDGETS + "test_the_gate_on_identical_builds_judges_the_heads_budgets_and_fails_on_none"]),
    ("a flag between adjacent commits is given a bisect command", "cuda_bench/bisect.py",
     "    if None in places or places[1] - places[0] < 2:", "    if None in places:", [BISECT]),
    ("a flag's page names the oldest bisect's answer, not the newest", "cuda_bench/bisect.py",
     "    for record in reversed(bisects):", "    for record in bisects:", [BISECT]),
    ("the plan looks for the wheels of the Python it runs, not the machine's", "cuda_bench/plan.py",
     "        self.python = machine_python(self.results_dir / machine_name)", "        self.python = None",
     ["tests/test_plan.py::test_the_plan_looks_for_the_wheels_of_the_python_the_machine_runs"]),
    # cold starts (benchmarks/_coldstart.py) and what import cuda.core imports (cuda_bench.imports)
    ("a cold start is not net of the empty process", "benchmarks/_coldstart.py",
     "    net = full - run(empty, env)\n", "    net = full\n",
     [COLD + "test_a_cold_start_is_its_process_less_the_empty_one_on_the_clock_asv_and_the_worker_read"]),
    ("the worker times a cold start on the wall clock, not its own", "cuda_bench/worker.py",
     "        self.clock = clock or time.perf_counter_ns\n", "        self.clock = time.perf_counter_ns\n",
     [COLD + "test_the_worker_times_a_case_on_its_own_clock_one_body_a_sample_and_does_not_count_it"]),
    ("cold starts are timed in every process pair", "cuda_bench/paired.py",
     "return min(self.pairs, self.cold_pairs) if is_cold_start(name) else self.pairs", "return self.pairs",
     [COLD + "test_a_cold_start_is_paired_in_the_first_cold_pairs_and_a_ten_percent_change_is_flagged"]),
    ("importtime keeps what python -c pass imports", "cuda_bench/imports.py",
     "for _ in range(runs)], startup)", "for _ in range(runs)])",
     [COLD + "test_an_eager_import_added_to_a_package_is_named_by_a_real_importtime"]),
    ("an added subtree is named by each of its modules", "cuda_bench/imports.py",
     "        while parent.get(top) in names:", "        while False:",
     [COLD + "test_the_diff_names_each_added_subtree_by_its_first_module_and_the_modules_that_got_slower"]),
    ("the cold starts are drawn among the calls, not as a group of their own", "cuda_bench/pages/landing.py",
     '        cold = [r for r in mrows if is_cold_start(r["benchmark"])]\n', "        cold = []\n",
     [COLD_PAGES + "test_the_front_page_has_a_cold_start_group_with_the_first_contexts_cpp_twin_and_a_graph_per_case"]),
    ("the first context's C++ twin has no cell in its row", "cuda_bench/overview.py",
     "    if number(cold_twin):", "    if False:",
     [COLD_PAGES + "test_the_front_page_has_a_cold_start_group_with_the_first_contexts_cpp_twin_and_a_graph_per_case"]),
    # build time per package tree (cuda_bench.buildtime, wheels.compile_record)
    ("a build's CPU seconds are this process's, not what pip ran", "cuda_bench/wheels.py",
     "    after = resource.getrusage(resource.RUSAGE_CHILDREN)\n", "    after = before\n",
     ["tests/test_build.py::test_a_build_records_the_cpu_seconds_of_what_pip_ran_and_each_tree_it_compiled_once"]),
    ("a build-time change is flagged within the spread of a rebuild", "cuda_bench/buildtime.py",
     "        bar = max(factor, spread_[0])\n", "        bar = factor\n",
     [BUILDTIME + "test_a_change_within_the_rebuild_spread_or_through_ccache_is_not_flagged"]),
    ("a build-time change is judged with no tree built twice", "cuda_bench/buildtime.py",
     "        spread_ = spread(compiles, package)\n",
     "        spread_ = spread(compiles, package) or (1.0, None, [])\n",
     [BUILDTIME + "test_a_doubling_with_a_cython_change_is_flagged_by_name_once_one_tree_was_built_twice"]),
    ("builds through ccache count", "cuda_bench/buildtime.py",
     '    return [c for c in compiles if not c["ccache"]]', "    return list(compiles)",
     [BUILDTIME + "test_a_change_within_the_rebuild_spread_or_through_ccache_is_not_flagged"]),
]


def run(tree, tests, timeout=900):
    """pytest on ``tests`` in ``tree`` (the project's venv, the tree first on the path): whether any failed."""
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                              cwd=tree, capture_output=True, text=True, timeout=timeout, start_new_session=True,
                              env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
    except subprocess.TimeoutExpired:  # a hang is a failure too
        return True, f"no answer in {timeout} s"
    return proc.returncode != 0, (proc.stdout.strip().splitlines() or ["?"])[-1]


def apply(tree, mutation):
    _, path, old, new, *_ = mutation
    text = (tree / path).read_text()
    if text.count(old) != 1:
        raise SystemExit(f"mutations: {path} has {text.count(old)} copies of the code to mutate: update MUTATIONS")
    (tree / path).write_text(text.replace(old, new))
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="only the mutations whose name holds this text")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or args.only in m[0]]
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), "HEAD"], cwd=ROOT, check=True)
        try:
            head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
            print(f"mutations of {head.stdout.strip()}: each one put back alone, the tests named for it run\n")
            missed = 0
            for mutation in chosen:
                name, path, _, _, tests, *combined = mutation
                start = time.monotonic()
                original = apply(tree, mutation)
                if combined:  # a bug another mechanism would mask: put both back
                    other = next(m for m in MUTATIONS if m[0] == combined[0])
                    other_original = apply(tree, other)
                try:
                    caught, said = run(tree, tests)
                finally:
                    (tree / path).write_text(original)
                    if combined:
                        (tree / other[1]).write_text(other_original)
                missed += not caught
                print(f"{'caught' if caught else 'MISSED'}  {name}  ({path}; {' '.join(tests)}: {said}; "
                      f"{time.monotonic() - start:.0f} s)", flush=True)
            print(f"\n{len(chosen) - missed} of {len(chosen)} caught")
            return 1 if missed else 0
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


if __name__ == "__main__":
    sys.exit(main())
