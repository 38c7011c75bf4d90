"""Benchmark two cuda-python commits on this GPU box and write the pull-request comment.

    python scripts/compare.py BASE HEAD [--repo PATH] [--bench REGEX] [--factor 1.10] [--output FILE]
    python scripts/compare.py --format-only ASV_COMPARE_OUTPUT BASE HEAD   # the formatter alone

What the PR workflow does, on a developer's machine: ``asv continuous`` with interleaved rounds (both
commits measured alternately, so drift hits both sides) and recorded samples (asv's Mann-Whitney U test
needs them: at least 6 a side), then ``asv compare --split``, turned into one Markdown comment:
regressions first, then improvements, then the count of unchanged benchmarks, with the machine and GPU.
Exit status 1 when something regressed, 2 on a usage or run error, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import bench

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


def comment(text, base, head, machine, factor):
    """The PR comment for one `asv compare --split` output."""
    sections = parse(text)
    worse, better, same = sections["worse"], sections["better"], sections["same"]
    gpu = ", ".join(f"{machine.get(k)}" for k in ("gpu", "driver") if machine.get(k)) or "no GPU"
    out = [
        MARKER,
        f"### cuda-python-bench: `{base}` → `{head}`",
        f"Machine `{machine.get('machine', '?')}` ({gpu}; {machine.get('cpu', '')}). "
        f"Flagged when slower by more than {factor:g}× and, where each side has at least 6 samples, "
        "significant by asv's Mann-Whitney U test (else: 99% confidence intervals do not overlap).",
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
    parser.add_argument("--results-dir", help="keep both commits' results there instead of results/")
    parser.add_argument("--cpu-affinity", default="auto", help="as for scripts/bench run")
    parser.add_argument("--bench", action="append", default=[], help="asv -b REGEX (repeatable)")
    parser.add_argument("--factor", type=float, default=1.10)
    parser.add_argument("--output", type=Path, help="also write the comment here")
    args = parser.parse_args(argv)

    if args.format_only:
        text = args.format_only.read_text()
        info = machine_info(args.machine or "?")
    else:
        config = bench.derived_conf(args)
        name = bench.record_machine(args.machine)
        bench_args = [arg for regex in args.bench for arg in ("-b", regex)]
        status = bench.asv("continuous", "--interleave-rounds", "--record-samples", "--show-stderr",
                           "--factor", str(args.factor), "--machine", name, *bench_args,
                           args.base, args.head, config=config, timed=True, affinity=args.cpu_affinity)
        info = machine_info(name, json.loads(config.read_text())["results_dir"])
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
    body = comment(text, args.base, args.head, info, args.factor)
    print(body)
    if args.output:
        args.output.write_text(body)
    return 1 if parse(text)["worse"] else 0


if __name__ == "__main__":
    sys.exit(main())
