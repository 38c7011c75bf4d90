"""Stage 4, compare: the pull-request comment (``summary.md``) of a paired record: the cases that
changed first, each with the interval it rests on, then what was left out and where the time went.
``cuda_bench.compare.gate`` writes it beside the record."""

from __future__ import annotations

import re

from cuda_bench.build import trees, wheels
from cuda_bench.compare.paired import counted, regressions
from cuda_bench.foundations import calls, counts, stats
from cuda_bench.foundations.text import (
    PER_CALL,
    code,
    interval,
    last_line,
    per_call,
    times,
    unchanged,
)
from cuda_bench.results import budgets, counts_read, instructions_read
from cuda_bench.run import imports

MARKER = "<!-- cuda-python-bench:compare -->"


def case_row(case, mark=""):
    return (
        f"| {calls.named(case['name'])}{mark} | {per_call(case)} | {times(case['ratio'])} | "
        f"[{case['low']:.3f}, {case['high']:.3f}] | {case['threshold']:.1%} |"
    )


def ordinal(n):
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}.get(n, f"{n}th")


def table_head(confidence):
    return [
        f"| case | {PER_CALL} | ratio | {confidence:.0%} interval | threshold |",
        "|---|--:|--:|:-:|--:|",
    ]


def built_from_text(sides):
    """What each side is built from, in one line: the packages whose trees (or wheel) differ, and
    those that do not."""
    base, head = sides["base"], sides["head"]
    changed = trees.differs(base, head)
    same = [p for p in trees.PACKAGES if p not in changed and p in base]
    parts = [
        f"`{p}` {str(base.get(p) or 'none')[:12]} → {str(head.get(p) or 'none')[:12]}"
        for p in changed
    ]
    return ("; ".join(parts) or "nothing differs") + (
        f"; the same: {', '.join(f'`{p}`' for p in same)}" if same else ""
    )


def comment(data):
    """The pull-request comment: the cases that changed first, each with the interval it rests
    on."""
    if data.get("identical"):
        return identical_comment(data)
    cases = counted(data)
    worse = sorted(regressions(data), key=lambda c: -c["low"])
    better = sorted((c for c in cases if c["verdict"] == "improvement"), key=lambda c: c["high"])
    same = [c for c in cases if c["verdict"] == "same"]
    versions = data.get("versions") or {}
    same_code = {
        c["name"]: said for c in worse + better if (said := unchanged(c["name"], versions))
    }
    out = heading(data, cases, worse, better, same)
    out += changed(worse, better, same_code, data["settings"]["confidence"])
    out += budgets_section(data)
    out += work_section(data)
    out += imports_section(data)
    out += instructions_section(data)
    out += rest(data, same, versions)
    return "\n".join(out) + "\n"


def budgets_section(data):
    """The head against its budgets (``budgets.json5``), where the gate judged it."""
    return budgets.markdown(data["budgets"]) if data.get("budgets") else []


def identical_comment(data):
    """The comment of two commits that build the same wheels: nothing was measured."""
    return (
        "\n".join(
            [
                MARKER,
                f"### cuda-python-bench: {code(data['base_rev'])} → {code(data['head_rev'])}",
                "",
                "**Identical builds: nothing measured.** Both commits build the same wheels "
                "(the same trees of every package folder, the same cuda-bindings), so every "
                "case would time the same code.",
                "",
                "Built from: " + built_from_text(data["built_from"]) + ".",
                *budgets_section(data),
            ]
        )
        + "\n"
    )


def heading(data, cases, worse, better, same):
    """The comment's first lines: what changed, in counts, and how it was measured."""
    info = data.get("machine") or {}
    gpu = ", ".join(str(info[k]) for k in ("gpu", "driver") if info.get(k)) or "no GPU"
    s = data["settings"]
    thresholds = sorted({c["threshold"] for c in cases})
    span = (
        (
            f"{thresholds[0]:.1%}"
            if len(thresholds) == 1
            else f"{thresholds[0]:.1%}–{thresholds[-1]:.1%}"
        )
        if thresholds
        else "n/a"
    )
    out = [
        MARKER,
        f"### cuda-python-bench: {code(data['base_rev'])} → {code(data['head_rev'])}",
        "",
        f"**{len(worse)} regression{'s' if len(worse) != 1 else ''}**, {len(better)} improvement"
        f"{'s' if len(better) != 1 else ''}, {len(same)} without a change beyond their threshold"
        + (f", {len(data['errors'])} not measured (errors below)" if data["errors"] else "")
        + (
            f", {len(data['lost'])} measured without some process pairs (below)"
            if data.get("lost")
            else ""
        )
        + ".",
        "",
        f"Paired on `{info.get('machine', '?')}` ({gpu}): for {s['pairs']} process pairs, one "
        "worker per build on one core"
        + (", each process its own memory layout (ASLR on)" if s["layouts"] == "random" else "")
        + ", samples taken in turn (A B B A); a case's ratio is the median over the pairs and its "
        f"interval a {s['confidence']:.0%} confidence interval of that median. A verdict needs the "
        f"whole interval beyond the case's threshold ({span}). {data['seconds']:.0f} s of "
        "measurement"
        + (
            f", {data['build_seconds']:.0f} s of builds"
            if data.get("build_seconds") is not None
            else ""
        )
        + ".",
    ]
    if data.get("env"):  # the sides differ by more than their builds
        out += [
            "",
            "Workers' environments: "
            + "; ".join(
                f"{side}: " + ", ".join(f"`{k}={v}`" for k, v in sorted(env.items()))
                for side, env in data["env"].items()
            )
            + ".",
        ]
    compilers = wheels.compiler_change(data.get("compiled_by"))
    if compilers:
        out += ["", f"**Two compilers**: {compilers}. Part of any change may be the compiler's."]
    if cases and max(c["coverage"] for c in cases) < s["confidence"]:
        out += [
            "",
            f"**No verdicts**: {s['pairs']} process pairs cannot give a {s['confidence']:.0%} "
            f"interval ({stats.fewest_pairs(s['confidence'])} or more can).",
        ]
    return out


def changed(worse, better, same_code, confidence):
    """The regressions and improvements, each a table; † where the code a case runs is the same
    version on both sides."""

    def row(case):
        return case_row(case, " †" if case["name"] in same_code else "")

    out = []
    if worse:
        out += ["", "#### Regressions", "", *table_head(confidence), *map(row, worse)]
    if better:
        out += ["", "#### Improvements", "", *table_head(confidence), *map(row, better)]
    if same_code:
        many = len(same_code) != 1
        out += [
            "",
            f"† marks {len(same_code)} case{'s' if many else ''} whose timed calls run only code "
            "that is the same version in both builds ("
            + "; ".join(sorted(set(same_code.values())))
            + f"): what moved {'them' if many else 'it'} lies outside that code, in what else the "
            "process holds or in the machine start (docs/method.md, rule 6).",
        ]
    return out


def rest(data, same, versions):
    """The comment's last parts: the controls, what was not measured or measured without some
    process pairs, the cases one build or both skip, the cases without a change, and what each side
    was built from."""
    s = data["settings"]
    out = []
    controls = [c for c in data["cases"] if c.get("control")]
    if controls:
        out += [
            "",
            "Controls (no cuda-python code; should read ×1.000): "
            + ", ".join(f"`{c['name']}` {interval(c)}" for c in controls),
        ]
    if data["errors"]:
        out += ["", "#### Not measured", ""] + [
            f"- `{name}`: {last_line(text)}" for name, text in sorted(data["errors"].items())
        ]
    if data.get("lost"):
        out += [
            "",
            "#### Measured without some process pairs",
            "",
            "Some process pairs could not measure these (a worker died or timed out there: a crash "
            "of one build is a finding of its own); each is measured from the others, enough for "
            "its interval:",
            "",
        ] + [f"- `{name}`: {text}" for name, text in sorted(data["lost"].items())]
    if data["only"]:
        out += [
            "",
            "Measured on one side only (the other build skips it): "
            + ", ".join(
                f"`{name}` (only {side})" for name, (side, _) in sorted(data["only"].items())
            ),
        ]
    if same:
        out += [
            "",
            f"<details><summary>{len(same)} cases without a change beyond their "
            "threshold</summary>",
            "",
            *table_head(s["confidence"]),
            *map(case_row, same),
            "",
            "</details>",
        ]
    if data["skipped"]:
        out += [
            "",
            f"{len(data['skipped'])} cases skipped by both builds (e.g. "
            f"`{next(iter(data['skipped']))}`: {next(iter(data['skipped'].values()))}).",
        ]
    if data.get("built_from"):
        out += ["", "Built from: " + built_from_text(data["built_from"]) + "."]
    if versions:
        out += [
            "",
            "Builds: "
            + "; ".join(
                f"{side}: "
                + ", ".join(
                    f"{k} {version_text(v, data.get(side))}" for k, v in sorted(found.items())
                )
                for side, found in versions.items()
                if found
            ),
        ]
    return out


def version_text(version, commit):
    """A package's version in a build of ``commit``, as the comment says it: a version whose label
    names another commit (``+g<sha>``: a wheel built there from the same tree, taken from the
    cache, which keys each wheel by its tree) says so, so that the base's line never seems to hold
    the head's code."""
    found = re.search(r"\+g([0-9a-f]{7,40})$", version or "")
    if found and commit and not commit.startswith(found.group(1)):
        return f"{version} (the same tree's wheel, built at {found.group(1)[:9]})"
    return version


def timing_of(data, name):
    """A case's timing verdict in a paired record, as the comment names it beside its change of
    work."""
    found = next((c for c in data["cases"] if c["name"] == name), None)
    if found is not None:
        return f"{interval(found)} {'control' if found.get('control') else found['verdict']}"
    if name in data["errors"]:
        return "not timed (an error, below)"
    if name in data.get("only", {}):
        return f"timed on the {data['only'][name][0]} side only"
    return "skipped by both builds" if name in data["skipped"] else "not timed"


def imports_section(data):
    """What ``import cuda.core`` imports differently at the head (``data["imports"]``: {"base":
    record, "head": record}, ``cuda_bench.run.imports``): the modules a change added or made slower,
    beside the cold-start cases' paired verdicts; or why it was not measured."""
    found = data.get("imports") or {}
    base, head = found.get("base") or {}, found.get("head") or {}
    if not found:
        return []
    errors = [
        f"{side}: {part['error']}"
        for side, part in (("base", base), ("head", head))
        if "error" in part
    ]
    if errors:
        heading = "#### What `import cuda.core` imports"
        return ["", heading, "", "Not measured: " + "; ".join(errors)]
    return imports.markdown(base, head)


def work_section(data):
    """The comment's lines on the work per call that changed, where ``data`` carries both commits'
    counts (``data["counts"]``: {"base": record, "head": record},
    ``cuda_bench.foundations.counts``): each case whose counts differ, beside its timing verdict,
    flagged or not."""
    found = data.get("counts") or {}
    base, head = found.get("base"), found.get("head")
    if not base or not head:
        return (
            ["", "#### Work per call that changed", "", f"Not counted: {found['error']}"]
            if found.get("error")
            else []
        )
    changed = counts_read.diff(base, head)
    both = len({c["name"] for c in base["cases"]} & {c["name"] for c in head["cases"]})
    out = [
        "",
        "#### Work per call that changed",
        "",
        "Counted, not timed, in a pass of its own after the timing: per call of each case's timed "
        "body, after a warm-up; CUDA driver and runtime API calls "
        f"({'CUPTI' if head['cuda_counted'] else 'not counted'}), NVRTC calls seen from Python "
        f"(not those made from Cython), Python and C calls ({head['mechanism']}), net memory "
        "blocks. Counts have no noise: any change is a change of work, whatever the timing says.",
        "",
    ]
    if changed:
        out += [f"- {text} ({timing_of(data, name)})" for name, text in changed.items()]
    else:
        out += [f"No case's work per call changed ({both} cases counted in both builds)."]
    notes = [*counts_read.caveats(base, head), counts.UNSEEN]
    errors = sorted(set(base["errors"]) | set(head["errors"]))
    if errors:
        notes.append(
            f"{len(errors)} cases could not be counted (e.g. `{errors[0]}`; summary.json has why)."
        )
    return out + (["", " ".join(notes)] if notes else [])


def instructions_section(data):
    """The comment's lines on instructions per call, where ``data`` carries both builds' counts
    (``data["instructions"]``: {"base": record, "head": record, "functions": {case: {"base": rows,
    "head": rows}}}, ``cuda_bench.compare.instrpass``): each case whose count moved beyond its
    spread or whose time was flagged, "+N instructions per call (+x %)" beside its timing verdict
    and what the two say together, with the functions whose counts changed most."""
    found = data.get("instructions") or {}
    base, head = found.get("base"), found.get("head")
    title = ["", "#### Instructions per call"]
    if not base or not head:
        return [*title, "", f"Not counted: {found['error']}"] if found.get("error") else []
    out = [*title, ""]
    why = instructions_read.comparable(base, head)
    if why:
        return [*out, why[0].upper() + why[1:] + "."]
    compared = instructions_read.compared(base, head)
    verdicts = {c["name"]: c["verdict"] for c in counted(data)}
    shown = [
        name
        for name, entry in compared.items()
        if entry["moved"] or verdicts.get(name) in ("regression", "improvement")
    ]
    for name in shown:
        entry = compared[name]
        said = instructions_read.agreement(verdicts.get(name), entry)
        text = (
            instructions_read.change_text(entry)
            if entry["moved"]
            else f"the same instructions per call (within ±{entry['bound']:.1%})"
        )
        out.append(
            f"- `{counts_read.case_label(name)}`: {text} beside {timing_of(data, name)}"
            + (f": {said}" if said else "")
        )
        rows = (found.get("functions") or {}).get(name) or {}
        if entry["moved"] and rows.get("base") is not None and rows.get("head") is not None:
            into = instructions_read.went_into_text(rows["base"], rows["head"])
            out += [f"  {into}." if into else "", ""]
            out += [
                f"  {line}" for line in instructions_read.function_table(rows["base"], rows["head"])
            ]
    if not any(compared[name]["moved"] for name in shown):
        out.append(
            f"No case's instructions per call moved beyond its spread ({len(compared)} cases "
            "counted in both builds)."
        )
    return [*out, "", instructions_read.WHAT]
