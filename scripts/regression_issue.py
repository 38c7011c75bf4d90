"""The body of the one GitHub issue that tracks what asv's regression detection flags on main.

    python scripts/regression_issue.py html/ [--output FILE]

Reads the published ``regressions.json`` and ``index.json`` (``scripts/bench publish``) and writes one
row per flagged benchmark: the machine and GPU, the benchmark and case, the commit range in which it got
slower, and by how much (the newest value against the best earlier one, and across the jump). Exit status
1 when there are regressions (the nightly workflow then opens or updates the issue), 0 when none.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from dashboard import fmt

MARKER = "<!-- cuda-python-bench:regressions -->"


def body(html_dir, commit_url="https://github.com/NVIDIA/cuda-python/commit/"):
    html_dir = Path(html_dir)
    regressions = json.loads((html_dir / "regressions.json").read_text())["regressions"]
    to_hash = json.loads((html_dir / "index.json").read_text())["revision_to_hash"]

    def commit(rev):
        sha = to_hash.get(str(rev)) if rev is not None else None
        return f"[`{sha[:9]}`]({commit_url}{sha})" if sha else "the first result"

    rows = []
    for name, graph, _params, _idx, last, best, jumps in (entry[:7] for entry in regressions):
        machine = re.search(r"/machine-([^/]+)/", graph)
        gpu = re.search(r"/gpu-([^/]+)/", graph)
        for before_rev, after_rev, before, after in jumps:
            rows.append(
                f"| {machine.group(1) if machine else '?'} ({gpu.group(1) if gpu else 'no GPU'}) | `{name}` "
                f"| {commit(before_rev)} … {commit(after_rev)} | {fmt(before)} → {fmt(after)} "
                f"(+{(after / before - 1) * 100:.0f}%) | {fmt(last)} vs best {fmt(best)} (+{(last / best - 1) * 100:.0f}%) |"
            )
    lines = [
        MARKER,
        f"asv flags **{len(rows)} regression{'s' if len(rows) != 1 else ''}** on main "
        "(thresholds: `regressions_thresholds` in asv.conf.json). Updated by the nightly benchmark run.",
        "",
    ]
    if rows:
        lines += ["| machine | benchmark | commits | jump | newest vs best |", "|---|---|---|---|---|", *rows]
    return "\n".join(lines) + "\n", len(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", type=Path)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    if not (args.html / "regressions.json").exists():
        print(f"regression_issue: {args.html}/regressions.json not found (run scripts/bench publish)", file=sys.stderr)
        return 2
    text, count = body(args.html)
    print(text)
    if args.output:
        args.output.write_text(text)
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main())
