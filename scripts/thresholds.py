"""Per-benchmark regression thresholds from an A/A run: the same code measured several times.

    python scripts/thresholds.py --machine nvidia-h200 --runs measurements/nvidia-h200/aa-main/run-*  # print
    python scripts/thresholds.py --machine nvidia-h200 --commits c278ecb3 cb56ab9f --write  # asv.conf.json

Runs come from ``--runs`` (results directories that ``scripts/bench aa`` writes, one run of one commit
each) and/or ``--commits`` (commits in ``--results``), all together one A/A set. They must measure the same
code: the same commit and environment, or, per ``builds.jsonl`` next to the results, every package built
from the same source tree (or taken from the same wheel); the script refuses otherwise. For every
benchmark and case it takes the spread of the medians, ``max / min - 1``, and sets the threshold to
``MARGIN`` times that, rounded up to 1%, never below ``FLOOR`` (asv flags a result when it is slower than
the best earlier one by more than the threshold, so the threshold must clear the noise with room).
``--write`` replaces the ``regressions_thresholds`` block of asv.conf.json: ``".*"`` keeps the default
for benchmarks the A/A run did not measure.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path

from dashboard import case_name, values

ROOT = Path(__file__).resolve().parent.parent
MARGIN = 1.5
FLOOR = 0.05
DEFAULT = 0.10


class ThresholdError(Exception):
    pass


def result_files(results_dir, machine):
    folder = Path(results_dir) / machine
    if not folder.is_dir():
        raise ThresholdError(f"no results for machine {machine} in {results_dir}")
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json")) if p.name != "machine.json"]


def results_for(results_dir, machine, commits):
    """One results dict per commit prefix, in the order given."""
    files = result_files(results_dir, machine)
    chosen = []
    for prefix in commits:
        match = [d for d in files if d["commit_hash"].startswith(prefix)]
        if len(match) != 1:
            raise ThresholdError(f"{len(match)} results files for commit {prefix} on {machine}")
        chosen.append(match[0])
    return chosen


def results_of_runs(dirs, machine):
    """The one results dict in each results directory (an A/A run of one commit)."""
    chosen = []
    for folder in dirs:
        files = result_files(folder, machine)
        if len(files) != 1:
            raise ThresholdError(f"{folder}: {len(files)} results files for {machine}, expected one run")
        chosen.append(files[0])
    return chosen


def build_keys(results_dir, machine):
    """{commit: {package: source key}} from builds.jsonl; the key's tree hash and bindings, not the
    version-naming scheme (``-v2``), which changes a wheel's name, not its code."""
    keys = {}
    path = Path(results_dir) / machine / "builds.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            keys[row["commit"]] = {name: re.sub(r"-v\d+(?=-|$)", "", info.get("key", info.get("action", "")))
                                   for name, info in row["packages"].items()}
    return keys


def same_code(results_dirs, machine, runs):
    """Refuse runs that measured different code: not one commit and environment, and not the same
    package sources by the builds.jsonl of the results directories they came from."""
    if len({(run["commit_hash"], run["env_name"]) for run in runs}) == 1:
        return
    builds = {}
    for folder in dict.fromkeys(map(str, results_dirs)):
        builds.update(build_keys(folder, machine))
    keys = [builds.get(run["commit_hash"]) for run in runs]
    if None in keys:
        raise ThresholdError("no build record for some commits: cannot tell that they measure the same code")
    if any(k != keys[0] for k in keys):
        raise ThresholdError(f"the commits measure different code: {keys}")


def spreads(runs):
    """{"bench.Class.method('core', 'x')": max/min - 1} over the runs' medians (both finite everywhere)."""
    per_run = [values(run) for run in runs]
    out = {}
    for key in per_run[0]:
        medians = [run.get(key) for run in per_run]
        if all(isinstance(v, float) and math.isfinite(v) and v > 0 for v in medians):
            out[case_name(*key)] = max(medians) / min(medians) - 1
    return out


def summary(spread_by_benchmark):
    """Markdown: the spread per library form (C++ twins, cuda.bindings, cuda.core, CuPy, the floor)."""
    forms = {}
    for name, spread in spread_by_benchmark.items():
        api = name.split("('")[1].split("'")[0] if "('" in name else ""
        form = "C++ twins" if name.startswith("bench_cpp.") else {
            "core": "cuda.core", "bindings": "cuda.bindings", "cupy": "CuPy", "noop": "harness floor"}.get(api, api)
        forms.setdefault(form, []).append(spread)
    forms["all"] = list(spread_by_benchmark.values())
    lines = ["| forms | cases | median spread | 90th percentile | max | within 3% | within 10% |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for form, spreads_ in forms.items():
        v = sorted(spreads_)
        lines.append(f"| {form} | {len(v)} | {statistics.median(v):.0%} | {v[min(len(v) - 1, int(0.9 * len(v)))]:.0%} "
                     f"| {v[-1]:.0%} | {sum(x <= 0.03 for x in v)} | {sum(x <= 0.10 for x in v)} |")
    return "\n".join(lines)


def thresholds(spread_by_benchmark):
    return {name: max(FLOOR, math.ceil(MARGIN * spread * 100) / 100) for name, spread in spread_by_benchmark.items()}


def write(conf_path, by_benchmark):
    """Replace asv.conf.json's regressions_thresholds block (the file has comments: edit it as text)."""
    text = Path(conf_path).read_text()
    # asv matches each regex against "<benchmark>(<params>)" plus "@<branch>" when branches are configured
    block = {".*": DEFAULT, **{re.escape(name) + "(@|$)": t for name, t in sorted(by_benchmark.items())}}
    rendered = json.dumps(block, indent=4).replace("\n", "\n    ")
    new, count = re.subn(r'"regressions_thresholds"\s*:\s*\{[^{}]*\}',
                         lambda _: f'"regressions_thresholds": {rendered}', text)  # no template escapes
    if count != 1:
        raise ThresholdError(f"{conf_path}: no single regressions_thresholds block to replace")
    Path(conf_path).write_text(new)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True)
    parser.add_argument("--commits", nargs="+", default=[], help="commits in --results measuring the same code")
    parser.add_argument("--runs", nargs="+", type=Path, default=[], help="results directories, one run each")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--config", type=Path, default=ROOT / "asv.conf.json")
    parser.add_argument("--write", action="store_true", help="write them into --config")
    parser.add_argument("--summary", action="store_true", help="print the spread per library form as Markdown")
    args = parser.parse_args(argv)
    try:
        if len(args.commits) + len(args.runs) < 2:
            raise ThresholdError("an A/A run needs at least two runs")
        runs = results_for(args.results, args.machine, args.commits) if args.commits else []
        runs += results_of_runs(args.runs, args.machine)
        same_code([args.results, *args.runs], args.machine, runs)
        spread = spreads(runs)
        result = thresholds(spread)
        if args.summary:
            print(summary(spread))
            return 0
        for name in sorted(result, key=lambda n: -spread[n]):
            print(f"{spread[name] * 100:6.1f}% spread -> threshold {result[name]:.2f}  {name}")
        if args.write:
            write(args.config, result)
            print(f"thresholds: {len(result)} written to {args.config}", file=sys.stderr)
    except ThresholdError as exc:
        print(f"thresholds: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
