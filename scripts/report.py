"""The overview as Markdown: one row per operation, C++ / cuda.bindings / cuda.core / CuPy side by side.

    python scripts/report.py                 # each machine's newest commit in results/
    python scripts/report.py --commit cb56ab9f
    python scripts/report.py --across v0.1.0=72acaaf0 v0.5.1=73f808a6 main=cb56ab9f [--api core]

The same rows as the dashboard's overview page (scripts/dashboard.py): medians from asv's results, each
Python number raw and net of the harness floor (the same run's ``bench_harness.Floor``), the C++ twin's
per-call median (no harness: already net), and cuda.core's net overhead over C++.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dashboard import APIS, TITLES, fmt, fmt_net, load_results, number, overview_rows, signed

ROOT = Path(__file__).resolve().parent.parent


def cell(row, api):
    c = row["cells"].get(api)
    if c is None:
        return ""
    if not number(c["value"]):
        return "failed" if c["value"] is None else "n/a"
    if number(c.get("net")):
        return f"{fmt(c['value'])} (net {fmt_net(c['net'])})"
    return fmt(c["value"])


def markdown(rows):
    first = rows[0]
    params = first["params"]
    lines = [
        f"Machine `{first['machine']}`: {params.get('gpu', 'no GPU')}, driver {params.get('driver', '-')} "
        f"(CUDA {params.get('cuda_driver', '-')}), {params.get('cpu')}, {params.get('num_cpu')} CPUs; "
        f"cuda-python commit `{first['commit'][:9]}`.",
        "",
        f"Harness floor (`bench_harness.Floor.time_noop`: asv's parameterised loop and `self.fn(*self.args)` "
        f"around `int()`, a C builtin that does nothing, measured in the same run): "
        f"**{fmt(first['floor']) if number(first['floor']) else 'n/a'}**. Every Python number is raw (floor "
        f"included) and, in parentheses, net (raw − floor; `<0` is noise). C++ is timed in-process without the "
        f"harness: already net. \"cuda.core over C++\" compares the net number with C++"
        f"{'' if number(first['floor']) else ' (no floor in this run: the raw number)'}.",
        "",
        "| operation | case | " + " | ".join(TITLES[a] for a in APIS) + " | cuda.core over C++ |",
        "|---|---|" + "---:|" * (len(APIS) + 1),
    ]
    for row in rows:
        module, cls, _ = row["benchmark"].split(".")
        core = row["cells"].get("core", {})
        over = ""
        if "over_cpp_ns" in core:
            x = "" if core["over_cpp_x"] is None else f" ({core['over_cpp_x']:.1f}×)"
            over = signed(core["over_cpp_ns"] * 1e-9) + x
        lines.append(f"| `{module[6:]}.{cls}` | {' '.join(row['case'])} | "
                     + " | ".join(cell(row, a) for a in APIS) + f" | {over} |")
    return "\n".join(lines)


def across(runs, columns, api):
    """One row per operation and case, one column per ``LABEL=COMMIT`` (the release ladder): ``api``'s
    median per call, raw, and the harness floor of each run on top."""
    from dashboard import FLOOR, values

    picked = []
    for column in columns:
        label, _, prefix = column.rpartition("=")
        found = [d for _, d in runs if d["commit_hash"].startswith(prefix)]
        if not found:
            raise SystemExit(f"report: no results for commit {prefix}")
        picked.append((label or prefix, values(found[-1])))
    keys = [k for k in picked[-1][1] if k[1][:1] == (f"'{api}'",)]
    for _, vals in picked[:-1]:
        keys += [k for k in vals if k[1][:1] == (f"'{api}'",) and k not in keys]
    lines = ["| operation | case | " + " | ".join(label for label, _ in picked) + " |",
             "|---|---|" + "---:|" * len(picked),
             "| harness floor |  | " + " | ".join(fmt(v.get((FLOOR, ("'noop'",)))) if number(v.get((FLOOR, ("'noop'",))))
                                          else "n/a" for _, v in picked) + " |"]
    for name, combo in sorted(keys):
        module, cls, _ = name.split(".")
        cells = []
        for _, vals in picked:
            value = vals.get((name, combo))
            if (name, combo) not in vals:
                cells.append("—")  # the suite had no such benchmark or case then
            else:
                cells.append(fmt(value) if number(value) else "failed" if value is None else "skipped")
        case = " ".join(c.strip("'") for c in combo[1:])
        lines.append(f"| `{module[6:]}.{cls}` | {case} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--commit", help="report this commit (a prefix) instead of the newest")
    parser.add_argument("--across", nargs="+", metavar="[LABEL=]COMMIT",
                        help="one column per commit (a release ladder) for one api")
    parser.add_argument("--api", default="core", choices=APIS)
    args = parser.parse_args(argv)
    runs = load_results(args.results)
    if args.across:
        print(across(runs, args.across, args.api))
        return 0
    if args.commit:
        runs = [(m, d) for m, d in runs if d["commit_hash"].startswith(args.commit)]
    if not runs:
        print("report: no results (run scripts/bench run first)", file=sys.stderr)
        return 1
    suite = json.loads((args.results / "benchmarks.json").read_text())
    names = {n: b.get("param_names", []) for n, b in suite.items() if isinstance(b, dict)}
    rows = overview_rows(runs, set(), {}, names)
    machines = sorted({r["machine"] for r in rows})
    print("\n\n".join(markdown([r for r in rows if r["machine"] == m]) for m in machines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
