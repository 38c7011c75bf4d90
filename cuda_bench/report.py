"""Stage 5, publish: the history as Markdown: the overview's rows, the paired steps, the release ladder across
commits, and the nightly issue (``cuda-bench report``).
"""

from __future__ import annotations

from cuda_bench import history, overcpp, results, stats
from cuda_bench.names import HARNESS, short_name
from cuda_bench.overview import APIS, TITLES
from cuda_bench.text import TARGET_NS, fmt, fmt_net, fmt_ns, last_line, measurements, number, standing


# --- Markdown ----------------------------------------------------------------------------------------
def cell_text(row, api):
    c = row["cells"].get(api)
    if c is None:
        return ""
    if not number(c["value"]):
        return "failed" if c["value"] is None else "n/a"
    text = fmt(c["value"]) + (f" (net {fmt_net(c['net'])})" if number(c.get("net")) else "")
    if c.get("index"):
        text += f" ×{c['index'][0]:.3f}"
    return text


def markdown(rows):
    first = rows[0]
    params = first["params"]
    usual = overcpp.usual_runs(rows)
    ranges = f"; here a range is over {overcpp.usual_runs_text(usual)} unless its cell names a count" if usual else ""
    lines = [
        f"Machine `{first['machine']}`: {params.get('gpu', 'no GPU')}, driver {params.get('driver', '-')} "
        f"(CUDA {params.get('cuda_driver', '-')}), {params.get('cpu')}, {params.get('num_cpu')} CPUs; "
        f"cuda-python commit `{first['commit'][:9]}`.",
        "",
        f"Harness floor (`bench_harness.Floor.time_noop`: the same timed body, the call written out "
        f"many times per asv loop turn (`benchmarks/_op.py` `UNROLL`), around `gc.isenabled()`, a C function that does nothing, measured in the same run): "
        f"**{fmt(first['floor']) if number(first['floor']) else 'n/a'}**. Every Python number is raw (floor "
        f"included) and, in parentheses, net (raw − floor; `<0` is noise); where the history's paired steps "
        f"reach this commit, ×N is the chained index (product of the paired ratios since the first commit they "
        f"reach). C++ is timed in-process without the harness: already net. \"cuda.core over C++\" compares the "
        f"net number with C++{'' if number(first['floor']) else ' (no floor in this run: the raw number)'}.",
        "",
        f"\"Over C++\" is {'paired (Python and its C++ twin timed in turn in one process, `scripts/bench overhead`)' if any('over_cpp' in c for r in rows for c in r['cells'].values()) else 'unpaired'}: "
        f"the difference per call and the ratio, ✓ under cuda-python's target of {fmt(TARGET_NS * 1e-9)} over C++ "
        f"(#1580), ✗ above. Where this commit has more than one recorded run of the same twins timed and read "
        f"the same way, the number is the run nearest the fast state (whose C++ twins ran fastest) and, in "
        f"parentheses, the lowest and highest ratio over the runs (runs on other machine starts move a ratio "
        f"more than one run's interval says), less those in the slow state (C++ twins more than ×{overcpp.SLOW_STATE} "
        f"slower than their fastest recorded run on the machine: their ratios read high; such a run is "
        f"marked ⚠ where no other measured the case){ranges}. ★: the sides do different work "
        f"(the reason under the table).",
        "",
        "| operation | case | " + " | ".join(TITLES[a] for a in APIS) + " | cuda.core over C++ | cuda.bindings over C++ |",
        "|---|---|" + "---:|" * (len(APIS) + 2),
    ]
    marked = {}
    for row in rows:
        short = short_name(row["benchmark"])
        star = " ★" if row.get("differs") else ""
        if star:
            marked[short] = row["differs"]
        lines.append(f"| `{short}`{star} | {' '.join(row['case'])} | "
                     + " | ".join(cell_text(row, a) for a in APIS)
                     + f" | {overcpp.over_text(row['cells'].get('core', {}), usual)} | {overcpp.over_text(row['cells'].get('bindings', {}), usual)} |")
    if marked:
        lines += ["", *(f"★ `{name}`: {reason}." for name, reason in marked.items())]
    if first.get("older"):
        lines += ["", OLDER.format(names=", ".join(f"`{n}`" for n in first["older"]))]
    return "\n".join(lines)


OLDER = ("Not in the table: {names}, measured at this commit by an earlier version of the benchmark (it has "
         "changed since; asv does not compare versions either).")


def across(runs, columns, api):
    """One row per operation and case, one column per ``LABEL=COMMIT`` (the release ladder): ``api``'s
    median per call, raw, and the harness floor of each run on top."""
    picked = []
    for column in columns:
        name, _, prefix = column.rpartition("=")
        found = [d for _, d in runs if d["commit_hash"].startswith(prefix)]
        if not found:
            raise SystemExit(f"report: no results for commit {prefix}")
        picked.append((name or prefix, results.values(found[-1])))
    keys = [k for k in picked[-1][1] if k[1][:1] == (f"'{api}'",)]
    for _, vals in picked[:-1]:
        keys += [k for k in vals if k[1][:1] == (f"'{api}'",) and k not in keys]
    floors = [v.get((HARNESS, ("'noop'",))) for _, v in picked]
    lines = ["| operation | case | " + " | ".join(name for name, _ in picked) + " |",
             "|---|---|" + "---:|" * len(picked),
             "| harness floor |  | " + " | ".join(fmt(f) if number(f) else "n/a" for f in floors) + " |"]
    for name, combo in sorted(keys):
        cells = []
        for _, vals in picked:
            value = vals.get((name, combo))
            if (name, combo) not in vals:
                cells.append("—")  # the suite had no such benchmark or case then
            else:
                cells.append(fmt(value) if number(value) else "failed" if value is None else "skipped")
        case = " ".join(c.strip("'") for c in combo[1:])
        lines.append(f"| `{short_name(name)}` | {case} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def steps_markdown(machine_name, steps):
    """The history's paired steps of one machine: each step's counts, then every case a step flagged."""
    lines = [f"Paired steps on `{machine_name}` (each newly measured commit against the previous one):", "",
             "| base → head | date | regressions | improvements | same | not reproduced | not measured | seconds |",
             "|---|---|--:|--:|--:|--:|--:|--:|"]  # VERDICTS, then the step's errors
    for step in steps:
        counted = [c for c in step["cases"] if not c.get("control")]
        count = {v: sum(c["verdict"] == v for c in counted) for v in stats.VERDICTS}
        lines.append(f"| `{step['base'][:9]}` → `{step['head'][:9]}` | {step.get('date', '')[:10]} | "
                     + " | ".join(str(count[v]) for v in stats.VERDICTS)
                     + f" | {len(step.get('errors') or {})} | {step.get('seconds', 0):.0f} |")
    for step in steps:
        where = f"`{step['base'][:9]}` → `{step['head'][:9]}`"
        for case in step["cases"]:
            if case["verdict"] in ("regression", "not reproduced") and not case.get("control"):
                said = standing(case, step.get("versions"))  # the versions only ever follow a regression's
                said = said if case["verdict"] == "not reproduced" else f"regression ({said})"
                lines.append(f"- {where} `{case['name']}`: {said}: {measurements(case)}")
        for name, text in sorted((step.get("errors") or {}).items()):
            lines.append(f"- {where} `{name}`: not measured: {last_line(text)}")
        for name, text in sorted((step.get("lost") or {}).items()):
            lines.append(f"- {where} `{name}`: measured from fewer process pairs: {text}")
    return "\n".join(lines)


MARKER = "<!-- cuda-python-bench:regressions -->"


def issue_body(steps_by_machine, commit_url="https://github.com/NVIDIA/cuda-python/commit/"):
    """The nightly issue: every case a paired step of main's history flagged, newest first (the release
    ladder's steps, ``results.release_step``, are history: counted in one line, listed on steps.html).
    (text, count)"""
    rows, releases = [], 0
    for machine_name, steps in sorted(steps_by_machine.items()):
        releases += len(history.flagged_steps([s for s in steps if history.release_step(s)]))
        for step, case in history.flagged_steps([s for s in steps if not history.release_step(s)]):
            base, head = step["base"], step["head"]
            rows.append(f"| {machine_name} | `{case['name']}` | [`{base[:9]}`]({commit_url}{base}) → "
                        f"[`{head[:9]}`]({commit_url}{head}) | {measurements(case)} | {case['threshold']:.1%} | "
                        f"{fmt_ns(case['base_ns'])} → {fmt_ns(case['head_ns'])} | {standing(case, step.get('versions'))} |")
    lines = [MARKER, f"The history's paired comparisons flag **{len(rows)} regression{'s' if len(rows) != 1 else ''}** "
             "on main: a newly measured commit against the previous one, interleaved on one core; a flag needs "
             f"the whole {stats.CONFIDENCE:.0%} interval beyond the case's threshold, and it is confirmed once a second "
             "machine start flags it too, one of the two with a layout per process (`scripts/bench steps --recheck`); one that another start measured without "
             "a flag is not listed. Updated by the nightly benchmark run.", ""]
    if releases:
        lines += [f"Not counted here: {releases} regression{'s' if releases != 1 else ''} between cuda-core releases "
                  "(the release ladder's paired steps), on the dashboard's steps page.", ""]
    if rows:
        lines += [f"| machine | case | commits | ratio [{stats.CONFIDENCE:.0%} interval], each measurement | threshold "
                  "| per call | standing |", "|---|---|---|--:|--:|--:|---|", *rows]
    return "\n".join(lines) + "\n", len(rows)
