"""Tabulate one asv results file: one row per operation, cuda.core / cuda.bindings / CuPy side by side.

    python scripts/report.py                          # newest results file of every machine
    python scripts/report.py results/nvidia-h200/cb56ab9f-....json

Prints Markdown: per operation and case the median of each library's samples (asv's own statistics),
and the harness floor (``bench_harness.Floor``) that every median includes. Skipped cases show ``n/a``,
failed ones ``failed``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APIS = ("core", "bindings", "cupy")
TITLES = {"core": "cuda.core", "bindings": "cuda.bindings", "cupy": "CuPy"}


def load(path):
    """{benchmark: {case tuple (without api): {api: value}}}, plus the file's metadata."""
    data = json.loads(Path(path).read_text())
    columns = data["result_columns"]
    table = {}
    for name, row in data["results"].items():
        entry = dict(zip(columns, row))
        params = entry.get("params") or []
        values = entry["result"] if params else [entry["result"]]
        for combo, value in zip(itertools.product(*params), values):
            combo = tuple(p.strip("'") for p in combo)
            api, case = (combo[0], combo[1:]) if combo else ("", ())
            table.setdefault(name, {}).setdefault(case, {})[api] = value
    return table, data


def fmt(seconds):
    if seconds is None:
        return "failed"
    if isinstance(seconds, float) and math.isnan(seconds):
        return "n/a"
    ns = seconds * 1e9
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns / 1e6:.2f} ms"


def markdown(path):
    table, data = load(path)
    params = data["params"]
    floor = table.pop("bench_harness.Floor.time_noop", {}).get((), {}).get("noop")
    lines = [
        f"Machine `{params.get('machine')}`: {params.get('gpu', 'no GPU')}, driver {params.get('driver', '-')}, "
        f"{params.get('cpu')}; commit `{data['commit_hash'][:9]}`; environment `{data['env_name']}`.",
        "",
        f"Harness floor (asv loop + `self.fn(*self.args)` around a no-op C call): **{fmt(floor)}**, "
        "included in every number below.",
        "",
        "| operation | case | " + " | ".join(TITLES[a] for a in APIS) + " |",
        "|---|---|" + "---:|" * len(APIS),
    ]
    for name in sorted(table):
        module, cls, _ = name.split(".")
        for case, values in table[name].items():
            cells = [fmt(values[a]) if a in values else "" for a in APIS]
            lines.append(f"| `{module}.{cls}` | {' '.join(case)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def newest_files(results_dir):
    for machine in sorted(p for p in Path(results_dir).iterdir() if p.is_dir()):
        files = [p for p in machine.glob("*.json") if p.name != "machine.json"]
        if files:
            yield max(files, key=lambda p: json.loads(p.read_text()).get("date") or 0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    args = parser.parse_args(argv)
    files = args.files or list(newest_files(ROOT / "results"))
    if not files:
        print("report: no results (run scripts/bench run first)", file=sys.stderr)
        return 1
    print("\n\n".join(markdown(f) for f in files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
