"""Per-benchmark regression thresholds from an A/A run: the same code measured several times.

    python scripts/thresholds.py --machine nvidia-h200 --runs measurements/nvidia-h200/aa-main/run-*  # print
    python scripts/thresholds.py --machine nvidia-h200 --commits c278ecb3 cb56ab9f --write  # asv.conf.json
    python scripts/thresholds.py --machine nvidia-h200 --runs DIR DIR:COMMIT ... --rounds 2 2 4  # rounds needed

Runs come from ``--runs`` (results directories that ``scripts/bench aa`` writes, one run of one commit
each) and/or ``--commits`` (commits in ``--results``), all together one A/A set. They must measure the same
code: the same commit and environment, or, per ``builds.jsonl`` next to the results, every package built
from the same source tree (or taken from the same wheel); the script refuses otherwise. For every
benchmark and case it takes the spread of the medians, ``max / min - 1``, and sets the threshold to
``MARGIN`` times that, rounded up to 1%, never below ``FLOOR`` (asv flags a result when it is slower than
the best earlier one by more than the threshold, so the threshold must clear the noise with room).
``--write`` replaces the ``regressions_thresholds`` block of asv.conf.json: ``".*"`` keeps the default
for benchmarks the A/A run did not measure. ``--summary`` prints the spread per library form; when
the runs recorded samples (``scripts/bench aa`` does), also the spread of each run's fastest sample,
the statistic that ``scripts/compare.py`` decides by.

``--rounds R [R ...]`` (runs with recorded samples, R interleaved rounds each: one value for all runs or one
per run) asks how many rounds a side ``scripts/compare.py`` needs on this machine. asv stores a round's
samples one after another, so each run splits into R blocks; the fastest sample of each block is one
independent look at the machine. Pooling those over the runs, it draws A/A comparisons of k rounds a side
(without replacement) and prints, per k, how many cases the fastest-sample check would flag as slower
beyond ``--factor`` on average, and how often it would flag none.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import statistics
import sys
from pathlib import Path

import bench
from dashboard import case_name, samples, values

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


def split_run(entry):
    """``DIR`` or ``DIR:COMMIT`` (one commit's run in a directory that holds several, e.g. a comparison's)."""
    folder, _, commit = str(entry).partition(":")
    return Path(folder), commit


def results_of_runs(entries, machine):
    """The one results dict in each results directory (an A/A run of one commit), or of the named commit."""
    chosen = []
    for entry in entries:
        folder, commit = split_run(entry)
        files = [d for d in result_files(folder, machine) if d["commit_hash"].startswith(commit)]
        if len(files) != 1:
            raise ThresholdError(f"{entry}: {len(files)} results files for {machine}, expected one run"
                                 + ("" if commit else " (name one commit: DIR:COMMIT)"))
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


def fastest(run):
    """{(benchmark, params): fastest recorded sample} of one run (``asv run --record-samples``)."""
    return {key: float(min(found)) if found else None for key, found in samples(run).items()}


def spreads(runs, statistic="median"):
    """{"bench.Class.method('core', 'x')": max/min - 1} over the runs' medians (``"fastest"``: over each
    run's fastest sample), for the cases measured in every run."""
    per_run = [values(run) if statistic == "median" else fastest(run) for run in runs]
    out = {}
    for key in per_run[0]:
        medians = [run.get(key) for run in per_run]
        if all(isinstance(v, float) and math.isfinite(v) and v > 0 for v in medians):
            out[case_name(*key)] = max(medians) / min(medians) - 1
    return out


def round_minima(runs, rounds):
    """{"bench.Class.method('core')": [fastest sample of each round, over all runs]}, for the cases with
    samples in every round of every run (asv appends a round's samples after the previous round's)."""
    pool = {}
    for run, count in zip(runs, rounds, strict=True):
        for key, found in samples(run).items():
            per_round = len(found) // count
            if per_round and len(found) == per_round * count:
                blocks = (found[i * per_round:(i + 1) * per_round] for i in range(count))
                pool.setdefault(case_name(*key), []).extend(min(block) for block in blocks)
    return {name: minima for name, minima in pool.items() if len(minima) == sum(rounds)}


def false_flags(pool, k, factor, trials=500, seed=0):
    """A/A comparisons of ``k`` rounds a side drawn from the pooled rounds: (mean number of cases whose
    head's fastest exceeds the base's by more than ``factor``, fraction of trials that flag none)."""
    rng = random.Random(seed)
    counts = []
    for _ in range(trials):
        flagged = 0
        for minima in pool.values():
            drawn = rng.sample(minima, 2 * k)
            flagged += min(drawn[k:]) > factor * min(drawn[:k])
        counts.append(flagged)
    return statistics.mean(counts), sum(c == 0 for c in counts) / trials


def rounds_table(pool, factor):
    """Markdown: expected false regressions of the fastest-sample check per number of rounds a side."""
    depth = min(map(len, pool.values())) // 2
    if depth < 1:
        raise ThresholdError("too few rounds to draw an A/A comparison")
    lines = [f"{len(pool)} cases, {depth * 2} rounds each pooled; A/A comparisons drawn from them:", "",
             f"| rounds a side | false regressions beyond {factor:g}× (mean) | comparisons with none |",
             "|---:|---:|---:|"]
    for k in range(1, depth + 1):
        mean, none = false_flags(pool, k, factor)
        lines.append(f"| {k} | {mean:.1f} | {none:.0%} |")
    return "\n".join(lines)


def has_samples(runs):
    return all(any(v for v in values(run, "samples").values()) for run in runs)


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
    # asv matches each regex against "<benchmark>(<params>)" plus "@<branch>" when branches are configured
    block = {".*": DEFAULT, **{re.escape(name) + "(@|$)": t for name, t in sorted(by_benchmark.items())}}
    try:
        bench.rewrite_conf_block(conf_path, "regressions_thresholds", lambda _: block, indent=4)
    except ValueError as exc:
        raise ThresholdError(str(exc)) from None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True)
    parser.add_argument("--commits", nargs="+", default=[], help="commits in --results measuring the same code")
    parser.add_argument("--runs", nargs="+", default=[],
                        help="results directories, one run each (DIR:COMMIT picks one commit's run)")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--config", type=Path, default=ROOT / "asv.conf.json")
    parser.add_argument("--write", action="store_true", help="write them into --config")
    parser.add_argument("--summary", action="store_true", help="print the spread per library form as Markdown")
    parser.add_argument("--rounds", nargs="+", type=int, metavar="R",
                        help="rounds per run (one for all, or one per run): print how many rounds a side "
                             "scripts/compare.py needs")
    parser.add_argument("--factor", type=float, default=1.10, help="with --rounds: compare.py's factor")
    args = parser.parse_args(argv)
    try:
        if len(args.commits) + len(args.runs) < 2:
            raise ThresholdError("an A/A run needs at least two runs")
        runs = results_for(args.results, args.machine, args.commits) if args.commits else []
        runs += results_of_runs(args.runs, args.machine)
        same_code([args.results, *(split_run(entry)[0] for entry in args.runs)], args.machine, runs)
        if args.rounds:
            rounds = args.rounds * len(runs) if len(args.rounds) == 1 else args.rounds
            if len(rounds) != len(runs) or min(rounds) < 1:
                raise ThresholdError(f"--rounds: give one count for all runs or one per run ({len(runs)})")
            print(rounds_table(round_minima(runs, rounds), args.factor))
            return 0
        spread = spreads(runs)
        result = thresholds(spread)
        if args.summary:
            print(f"Spread of the {len(runs)} runs' medians (max/min - 1) per case:\n\n{summary(spread)}")
            if has_samples(runs):
                print(f"\nSpread of the {len(runs)} runs' fastest samples:\n\n{summary(spreads(runs, 'fastest'))}")
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
