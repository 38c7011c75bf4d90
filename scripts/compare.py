"""Benchmark two cuda-python commits on this GPU box and write the pull-request comment.

    python scripts/compare.py BASE HEAD [--repo PATH] [--bench REGEX] [--factor 1.10] [--output FILE]
    python scripts/compare.py --format-only ASV_COMPARE_OUTPUT BASE HEAD   # the formatter alone

What the PR workflow does, on a developer's machine: ``asv continuous`` with interleaved rounds (both
commits measured alternately, so drift hits both sides) and recorded samples (asv's Mann-Whitney U test
needs them: at least 6 a side), then ``asv compare --split``, turned into one Markdown comment:
regressions first, then improvements, then the count of unchanged benchmarks, with the machine and GPU.

The verdict is the **fastest-sample check** when both sides recorded samples: the fastest sample of the
head over the fastest of the base, per benchmark, flagged beyond ``--factor``. On the lent H200 VM a
benchmark runs, for whole rounds at a time, either at full speed or about twice slower (the C++ twins
too: the machine, not Python), so asv's medians and its rank test compare mixtures of the two states;
the fastest sample of several interleaved rounds is the call's cost when nothing interferes
(docs/measurement.md). asv's own table follows, for reference. Without samples (``--format-only`` with no
results), asv's verdict stands. Exit status 1 when something regressed, 2 on a usage or run error, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import bench
from dashboard import case_name, fmt, samples

MARKER = "<!-- cuda-python-bench:compare -->"
SECTIONS = {
    "Benchmarks that have got worse:": "worse",
    "Benchmarks that have improved:": "better",
    "Benchmarks that have stayed the same:": "same",
    "Benchmarks that are not comparable:": "incomparable",
}


def parse(text):
    """asv compare --split output -> {"worse": [row, ...], ...}; row = [change, before, after, ratio, name]."""
    sections, current = {key: [] for key in [*SECTIONS.values(), "missing"]}, None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in SECTIONS:
            current = SECTIONS[stripped]
        elif current and stripped.startswith("|") and not set(stripped) <= set("|-: "):
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if cells[0] != "Change" and len(cells) == 5:
                # skipped or not run on one side (e.g. `--bench` ran a subset): not "unchanged"
                missing = current == "same" and "n/a" in (cells[1], cells[2])
                sections["missing" if missing else current].append(cells)
    return sections


def table(rows):
    lines = ["| Change | Before | After | Ratio | Benchmark |", "|:-:|--:|--:|--:|---|"]
    lines += [f"| {c or ' '} | {b} | {a} | {r} | `{name}` |" for c, b, a, r, name in rows]
    return "\n".join(lines)


MIN_SAMPLES = 6
ROUNDS = 4  # interleaved rounds a side (asv's default is 2): four chances to catch the machine at full speed


def fastest_samples(results_dir, machine, commit):
    """{"bench.Class.method('core')": fastest sample} from asv's results of one commit (needs samples)."""
    folder = Path(results_dir) / machine
    out = {}
    for path in folder.glob("*.json") if folder.is_dir() else []:
        if path.name == "machine.json":
            continue
        data = json.loads(path.read_text())
        if not data.get("commit_hash", "").startswith(commit):
            continue
        for key, found in samples(data).items():
            if len(found) >= MIN_SAMPLES:
                out[case_name(*key)] = min(found)
    return out


def fastest_check(base, head, factor):
    """Benchmarks measured on both sides: (worse, better, same) rows of (name, before, after, ratio)."""
    rows = [(name, base[name], head[name], head[name] / base[name]) for name in sorted(base) if name in head]
    worse = sorted((r for r in rows if r[3] > factor), key=lambda r: -r[3])
    better = sorted((r for r in rows if r[3] < 1 / factor), key=lambda r: r[3])
    return worse, better, [r for r in rows if 1 / factor <= r[3] <= factor]


def fastest_table(rows):
    lines = ["| Before | After | Ratio | Benchmark |", "|--:|--:|--:|---|"]
    lines += [f"| {fmt(b)} | {fmt(a)} | {r:.2f} | `{name}` |" for name, b, a, r in rows]
    return "\n".join(lines)


def verdict(text, fastest):
    """Regressions that decide the exit status: the fastest-sample check's, else asv's."""
    return fastest[0] if fastest else parse(text)["worse"]


def comment(text, base, head, machine, factor, fastest=None):
    """The PR comment for one `asv compare --split` output (and the fastest-sample check, when given)."""
    sections = parse(text)
    worse, better, same = sections["worse"], sections["better"], sections["same"]
    gpu = ", ".join(f"{machine.get(k)}" for k in ("gpu", "driver") if machine.get(k)) or "no GPU"
    out = [
        MARKER,
        f"### cuda-python-bench: `{base}` → `{head}`",
        f"Machine `{machine.get('machine', '?')}` ({gpu}; {machine.get('cpu', '')}).",
    ]
    if fastest:
        f_worse, f_better, f_same = fastest
        out += [
            f"Verdict: the fastest of each side's interleaved samples, flagged when slower by more than {factor:g}×.",
            "",
            f"**{len(f_worse)} regression{'s' if len(f_worse) != 1 else ''}**, {len(f_better)} improvement"
            f"{'s' if len(f_better) != 1 else ''}, {len(f_same)} unchanged (fastest sample).",
        ]
        if f_worse:
            out += ["", "#### Regressions (fastest sample)", "", fastest_table(f_worse)]
        if f_better:
            out += ["", "#### Improvements (fastest sample)", "", fastest_table(f_better)]
        out += ["", "#### asv compare (medians)", ""]
    out += [
        f"asv flags a benchmark slower by more than {factor:g}× and, where each side has at least 6 samples, "
        "significant by its Mann-Whitney U test (else: 99% confidence intervals do not overlap).",
        "",
        f"**{len(worse)} regression{'s' if len(worse) != 1 else ''}**, {len(better)} improvement"
        f"{'s' if len(better) != 1 else ''}, {len(same)} unchanged"
        + (f", {len(sections['incomparable'])} not comparable (benchmark changed)" if sections["incomparable"] else "")
        + (f", {len(sections['missing'])} not measured on both sides" if sections["missing"] else "")
        + ".",
    ]
    if worse:
        out += ["", "#### Regressions", "", table(worse)]
    if better:
        out += ["", "#### Improvements", "", table(better)]
    if same:
        out += ["", f"<details><summary>{len(same)} unchanged</summary>", "", table(same), "", "</details>"]
    return "\n".join(out) + "\n"


def machine_info(name, results_dir=bench.ROOT / "results"):
    """The machine as asv recorded it next to its results (GPU fields included)."""
    path = Path(results_dir) / name / "machine.json"
    return json.loads(path.read_text()) if path.exists() else {"machine": name}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("head")
    parser.add_argument("--format-only", metavar="ASV_COMPARE_OUTPUT", type=Path,
                        help="format a saved `asv compare --split` output; run nothing")
    parser.add_argument("--repo")
    parser.add_argument("--bindings")
    parser.add_argument("--system-site")
    parser.add_argument("--machine")
    parser.add_argument("--results-dir", help="keep both commits' results there instead of results/ "
                        "(with --format-only: where to read their samples)")
    parser.add_argument("--cpu-affinity", default="auto", help="as for scripts/bench run")
    parser.add_argument("--clock", choices=["wall", "reference"], default="wall", help="as for scripts/bench run")
    parser.add_argument("--bench", action="append", default=[], help="asv -b REGEX (repeatable)")
    parser.add_argument("-a", "--attribute", action="append", default=[],
                        help=f"asv -a KEY=VALUE (repeatable); rounds={ROUNDS} unless given")
    parser.add_argument("--factor", type=float, default=1.10)
    parser.add_argument("--output", type=Path, help="also write the comment here")
    args = parser.parse_args(argv)

    if args.format_only:
        text = args.format_only.read_text()
        name = args.machine or "?"
        results_dir = args.results_dir or bench.ROOT / "results"
        info = machine_info(name, results_dir)
    else:
        config = bench.derived_conf(args)
        name = bench.record_machine(args.machine)
        clock = bench.clock_env(args.clock, name)
        bench_args = [arg for regex in args.bench for arg in ("-b", regex)]
        attributes = args.attribute if any(a.startswith("rounds=") for a in args.attribute) else \
            [*args.attribute, f"rounds={ROUNDS}"]
        bench_args += [arg for attr in attributes for arg in ("-a", attr)]
        status = bench.asv("continuous", "--interleave-rounds", "--record-samples", "--show-stderr",
                           "--factor", str(args.factor), "--machine", name, *bench_args,
                           args.base, args.head, config=config, timed=True, affinity=args.cpu_affinity, clock=clock)
        bench.record_builds(name, config)  # what both commits were built from, next to their results
        results_dir = json.loads(config.read_text())["results_dir"]
        info = machine_info(name, results_dir)
        if status not in (0, 1):  # 1 = asv found a regression; anything else is a failed run
            print(f"compare: asv continuous exited {status}", file=sys.stderr)
            return 2
        proc = subprocess.run(
            [sys.executable, "-m", "asv", "compare", "--split", "--factor", str(args.factor), "--machine", name,
             args.base, args.head, "--config", str(config)],
            capture_output=True, text=True, cwd=bench.ROOT,
        )
        if proc.returncode != 0:
            print(f"compare: asv compare failed:\n{proc.stderr}", file=sys.stderr)
            return 2
        text = proc.stdout
    base_min = fastest_samples(results_dir, name, args.base)
    head_min = fastest_samples(results_dir, name, args.head)
    fastest = fastest_check(base_min, head_min, args.factor) if base_min and head_min else None
    body = comment(text, args.base, args.head, info, args.factor, fastest)
    print(body)
    if args.output:
        args.output.write_text(body)
    return 1 if verdict(text, fastest) else 0


if __name__ == "__main__":
    sys.exit(main())
