"""Stage 4, compare: two commits measured by the paired engine, and what the tool says about them.

Four uses of one engine (``cuda_bench.paired``):

* the pull-request gate, ``scripts/bench compare BASE HEAD``: a comment that leads with the cases that
  changed, each with its ratio and interval; exit status 1 only for a regression, a case whose whole
  interval lies beyond its threshold;
* calibration, ``scripts/bench aa COMMIT``: the same build on both sides; the farthest each case's interval
  strays from 1 sets that case's threshold on this machine (``results/<machine>/calibration.jsonl``);
* the history, after ``scripts/bench run``: each newly measured commit paired with the previous measured
  one on the same machine (``results/<machine>/steps.jsonl``), which the dashboard flags from;
* over C++, ``scripts/bench overhead COMMIT``: in one build, each Python form timed against its C++ twin
  sample by sample inside one process (``results/<machine>/overhead.jsonl``, the overview's "over C++").

Every run also writes ``summary.json``: the kind, both commits, the wall time, and per case the ratio,
the interval and the verdict.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cuda_bench import build, machine, paired, results, stats
from cuda_bench.layout import PAIRED_ENVS, cpp_id, is_control, label, split_case
from cuda_bench.suite import cases as suite_cases, twin_ids
from cuda_bench.text import TARGET_NS, fmt_ns, interval, last_line, unchanged

MARKER = "<!-- cuda-python-bench:compare -->"


class CompareError(Exception):
    pass


def case_names(bench_patterns, benchmark_dir):
    """The suite's time_ cases (``--bench`` regexes, as asv's ``-b``, narrow them)."""
    names = list(suite_cases(benchmark_dir))
    if bench_patterns:
        names = [n for n in names if any(re.search(p, n) for p in bench_patterns)]
    if not names:
        raise CompareError(f"no benchmark matches {bench_patterns}")
    return names


def environments(repo, revs, bindings, requirements, system_site, log_dir, progress):
    """One environment per distinct commit of ``revs`` (built in parallel, through the wheel cache):
    {rev: record}."""
    commits = {rev: build.resolve(repo, rev) for rev in revs}
    unique = list(dict.fromkeys(commits.values()))
    jobs = max(1, len(machine.cores()) // len(unique))

    def one(commit):
        path = PAIRED_ENVS / f"{commit[:12]}-{label(bindings)}-{build.python_tag()}"
        ready = (path / "cuda-bench-env.json").exists()
        progress(f"compare: environment for {commit[:9]} ({'reused' if ready else 'building'}: {path})")
        record = build.environment(repo, commit, path, bindings, requirements, system_site, jobs,
                                   Path(log_dir) / f"build-{commit[:12]}.log")
        if not ready:
            progress(f"compare: environment for {commit[:9]} ready in {record['seconds']} s")
        return commit, record

    with ThreadPoolExecutor(len(unique)) as pool:
        built = dict(pool.map(one, unique))
    return {rev: built[commit] for rev, commit in commits.items()}


def measure(repo, base, head, *, bindings, requirements=(), system_site=None, settings=None, bench=(),
            thresholds=None, log_dir, progress=None, env=None):
    """Build (or reuse) both environments and run the paired engine: (paired.Report, build seconds).
    ``env``: {"base"/"head": extra environment variables for that side's workers}."""
    progress = progress or (lambda m: print(m, file=sys.stderr, flush=True))
    settings = settings or paired.Settings()
    names = case_names(bench, settings.benchmark_dir)
    start = time.monotonic()
    envs = environments(repo, [base, head], bindings, requirements, system_site, log_dir, progress)
    built = round(time.monotonic() - start, 1)
    sides = [paired.Side(name, rev, envs[rev]["commit"], envs[rev]["python"], env=dict((env or {}).get(name, {})),
                         record=envs[rev])
             for name, rev in (("base", base), ("head", head))]
    return paired.run(sides, names, settings, Path(log_dir) / "workers", thresholds, progress), built


def summary(report, kind, expected=(), build_seconds=None, command=None, machine_info=None):
    """The record of one paired run (``summary.json``)."""
    base, head = report.sides
    return {
        "kind": kind, "base": base.commit, "head": head.commit, "base_rev": base.rev, "head_rev": head.rev,
        "seconds": report.seconds, "build_seconds": build_seconds, "expected": list(expected),
        "command": command, "machine": machine_info or {}, "host": machine.host(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": {**report.settings.describe(), "cores": report.cores, "aslr_off": all(
            w.get("aslr_off") for w in report.workers.values())},
        "versions": {side: w.get("versions") for side, w in report.workers.items()},
        "cases": [case.summary() for case in report.cases],
        "skipped": report.skipped, "only": {name: list(v) for name, v in report.only.items()},
        "errors": report.errors, "lost": report.lost,
        "env": {side.name: side.env for side in report.sides if side.env},
    }


def counted(data):
    """The cases that decide (controls never do)."""
    return [c for c in data["cases"] if not c.get("control")]


def regressions(data):
    return [c for c in counted(data) if c["verdict"] == "regression"]


def incomplete(data):
    """Whether a record left something out: a case not measured, or measured without some of its processes
    (``paired.kept``)."""
    return bool(data["errors"] or data.get("lost"))


def exit_status(data):
    """1: a regression; 2: a case failed (an error, a dead worker) or lost some process pairs; 0: neither (a case
    one build skips is listed, not failed)."""
    if regressions(data):
        return 1
    return 2 if incomplete(data) else 0


def case_row(case, mark=""):
    return (f"| `{case['name']}`{mark} | {fmt_ns(case['base_ns'])} → {fmt_ns(case['head_ns'])} | ×{case['ratio']:.3f} | "
            f"[{case['low']:.3f}, {case['high']:.3f}] | {case['threshold']:.1%} |")


def ordinal(n):
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}.get(n, f"{n}th")


def table_head(confidence):
    return [f"| case | per call, base → head | ratio | {confidence:.0%} interval | threshold |",
            "|---|--:|--:|:-:|--:|"]


def comment(data):
    """The pull-request comment: the cases that changed first, each with the interval it rests on."""
    cases = counted(data)
    worse = sorted(regressions(data), key=lambda c: -c["low"])
    better = sorted((c for c in cases if c["verdict"] == "improvement"), key=lambda c: c["high"])
    same = [c for c in cases if c["verdict"] == "same"]
    versions = data.get("versions") or {}
    same_code = {c["name"]: said for c in worse + better if (said := unchanged(c["name"], versions))}

    def row(case):
        return case_row(case, " †" if case["name"] in same_code else "")

    info = data.get("machine") or {}
    gpu = ", ".join(str(info[k]) for k in ("gpu", "driver") if info.get(k)) or "no GPU"
    s = data["settings"]
    thresholds = sorted({c["threshold"] for c in cases})
    span = (f"{thresholds[0]:.1%}" if len(thresholds) == 1 else f"{thresholds[0]:.1%}–{thresholds[-1]:.1%}") \
        if thresholds else "n/a"
    out = [
        MARKER,
        f"### cuda-python-bench: `{data['base_rev']}` → `{data['head_rev']}`",
        "",
        f"**{len(worse)} regression{'s' if len(worse) != 1 else ''}**, {len(better)} improvement"
        f"{'s' if len(better) != 1 else ''}, {len(same)} without a change beyond their threshold"
        + (f", {len(data['errors'])} not measured (errors below)" if data["errors"] else "")
        + (f", {len(data['lost'])} measured without some process pairs (below)" if data.get("lost") else "") + ".",
        "",
        f"Paired on `{info.get('machine', '?')}` ({gpu}): for {s['pairs']} process pairs, one worker per build on "
        f"one core"
        + (", each process its own memory layout (ASLR on)" if results.layouts(data) == "random" else "")
        + f", samples taken in turn (A B B A); a case's ratio is the median over the pairs and its interval "
        f"a {s['confidence']:.0%} confidence interval of that median. A verdict needs the whole interval beyond "
        f"the case's threshold ({span}). {data['seconds']:.0f} s of measurement"
        + (f", {data['build_seconds']:.0f} s of builds" if data.get("build_seconds") is not None else "") + ".",
    ]
    if data.get("env"):  # the sides differ by more than their builds
        out += ["", "Workers' environments: " + "; ".join(
            f"{side}: " + ", ".join(f"`{k}={v}`" for k, v in sorted(env.items())) for side, env in data["env"].items())
            + "."]
    if cases and max(c["coverage"] for c in cases) < s["confidence"]:
        out += ["", f"**No verdicts**: {s['pairs']} process pairs cannot give a {s['confidence']:.0%} interval "
                f"({stats.fewest_pairs(s['confidence'])} or more can)."]
    if worse:
        out += ["", "#### Regressions", "", *table_head(s["confidence"]), *map(row, worse)]
    if better:
        out += ["", "#### Improvements", "", *table_head(s["confidence"]), *map(row, better)]
    if same_code:
        many = len(same_code) != 1
        out += ["", f"† marks {len(same_code)} case{'s' if many else ''} whose timed calls run only code that is the "
                "same version in both builds (" + "; ".join(sorted(set(same_code.values()))) + "): what moved "
                f"{'them' if many else 'it'} lies outside that code, in what else the process holds or in the "
                "machine start (docs/measurement.md, \"What else the process holds\")."]
    controls = [c for c in data["cases"] if c.get("control")]
    if controls:
        out += ["", "Controls (no cuda-python code; should read ×1.000): " + ", ".join(
            f"`{c['name']}` {interval(c)}" for c in controls)]
    if data["errors"]:
        out += ["", "#### Not measured", ""] + [f"- `{name}`: {last_line(text)}"
                                               for name, text in sorted(data["errors"].items())]
    if data.get("lost"):
        out += ["", "#### Measured without some process pairs", "",
                "Some process pairs could not measure these (a worker died or timed out there: a crash of one "
                "build is a finding of its own); each is measured from the others, enough for its interval:",
                ""] + [f"- `{name}`: {text}" for name, text in sorted(data["lost"].items())]
    if data["only"]:
        out += ["", "Measured on one side only (the other build skips it): " + ", ".join(
            f"`{name}` (only {side})" for name, (side, _) in sorted(data["only"].items()))]
    if same:
        out += ["", f"<details><summary>{len(same)} cases without a change beyond their threshold</summary>", "",
                *table_head(s["confidence"]), *map(case_row, same), "", "</details>"]
    if data["skipped"]:
        out += ["", f"{len(data['skipped'])} cases skipped by both builds (e.g. `{next(iter(data['skipped']))}`: "
                f"{next(iter(data['skipped'].values()))})."]
    if versions:
        out += ["", "Builds: " + "; ".join(f"{side}: " + ", ".join(f"{k} {v}" for k, v in sorted(found.items()))
                                          for side, found in versions.items() if found)]
    return "\n".join(out) + "\n"


def _write(out_dir, data, names, markdown):
    """The record as ``names[0]``.json and ``markdown(data)`` as ``names[1]``.md into ``out_dir``; the text."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{names[0]}.json").write_text(json.dumps(data, indent=1) + "\n")
    text = markdown(data)
    (out_dir / f"{names[1]}.md").write_text(text)
    return text


def write(out_dir, data):
    """summary.json and comment.md into ``out_dir``."""
    return _write(out_dir, data, ("summary", "comment"), comment)


def calibration_record(data):
    """A calibration line for ``results/<machine>/calibration.jsonl`` from an A/A summary (the same commit on
    both sides, or two builds of the same behaviour)."""
    if data["kind"] != "aa":
        raise CompareError("calibration needs an A/A run")
    return {"base": data["base"], "head": data["head"], "date": data["date"], "settings": data["settings"],
            "thresholds": stats.calibrate(data["cases"])}


def overhead_items(bench, benchmark_dir):
    """(case, its C++ twin's ID) of every case ``bench`` selects that has a twin (any non-control case, where
    the suite does not list its twins): what ``overhead`` times."""
    twins = twin_ids(benchmark_dir)
    items = [(name, cpp_id(*split_case(name))) for name in case_names(bench, benchmark_dir) if not is_control(name)]
    return [(name, twin) for name, twin in items if twins is None or twin in twins]


def stamp_versions(cases, benchmark_dir):
    """Each measured case (a dict with ``name``) gains ``version``, the asv version of its benchmark in the suite
    that timed it: over-C++ ratios are compared across runs only for the same timed work (report.same_work)."""
    suite = suite_cases(benchmark_dir)
    for case in cases:
        found = suite.get(case["name"])
        case["version"] = getattr(found.cls, "version", None) if found else None
    return cases


def overhead(repo, rev, *, bindings, requirements=(), system_site=None, settings=None, bench=(), log_dir,
             progress=None, command=None, machine_info=None, groups_file=None):
    """Python over C++ at ``rev``: every case with a C++ twin against it (:func:`overhead_items`;
    ``cuda_bench.layout.cpp_id``), a record for ``overhead.jsonl``. With ``groups_file``,
    every ABBA group the record's medians come from is kept there too (:func:`write_groups`)."""
    progress = progress or (lambda m: print(m, file=sys.stderr, flush=True))
    settings = settings or paired.Settings.over_cpp()
    items = overhead_items(bench, settings.benchmark_dir)
    if not items:
        raise CompareError(f"nothing to time over C++: {list(bench)} match no case with a C++ twin")
    start = time.monotonic()
    env = environments(repo, [rev], bindings, requirements, system_site, log_dir, progress)[rev]
    built = round(time.monotonic() - start, 1)
    side = paired.Side("head", rev, env["commit"], env["python"], record=env)
    found = paired.overhead(side, items, settings, Path(log_dir) / "workers", progress)
    stamp_versions(found["cases"], settings.benchmark_dir)
    record = {
        "kind": "overhead", "commit": env["commit"], "rev": rev, "seconds": found["seconds"], "build_seconds": built,
        "command": command, "machine": machine_info or {}, "host": machine.host(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": {"processes": settings.pairs, "seconds_per_case_and_process": settings.seconds,
                     "sample_ns": settings.sample_ns, "confidence": settings.confidence, "cores": found["cores"],
                     "layouts": settings.layouts, "aslr_off": found["hello"].get("aslr_off"),
                     "state": "fast"},  # each case's numbers: medians over its fast-state processes (stats)
        "versions": found["hello"].get("versions"), "twins": found["hello"].get("twins"), "cases": found["cases"],
        "skipped": found["skipped"], "errors": found["errors"], "lost": found["lost"],
    }
    if groups_file:
        write_groups(groups_file, record, found["groups"], found["process_cores"])
    return record


def write_groups(path, record, groups, process_cores=None):
    """The raw side of an over-C++ record, gzipped JSON: {"commit", "date", "host", "settings", "groups": {case:
    per process, its ABBA groups [c1, p1, p2, c2] in ns per call}, "process_cores": the core each process ran
    on}; ``stats.overhead`` of a case's groups gives the record's numbers back. Too large for results/ (about
    20 MB gzipped for the whole suite); for questions the medians cannot answer, such as whether a ratio
    follows the cores' speed within a run."""
    data = {k: record.get(k) for k in ("commit", "date", "host", "settings", "twins")} | {
        "groups": groups, "process_cores": process_cores}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as f:
        json.dump(data, f)


def write_overhead(out_dir, data):
    """overhead.json and overhead.md into ``out_dir``; the Markdown."""
    return _write(out_dir, data, ("overhead", "overhead"), overhead_markdown)


def overhead_markdown(data, target_ns=TARGET_NS):
    """The over-C++ table of one record: per case the ratio and the difference, each with its interval."""
    out = [f"### Over C++ at `{data['rev']}` ({data['commit'][:9]})", "",
           f"Each Python form and its C++ twin timed in turn, sample by sample, in one process; "
           f"{data['settings']['processes']} processes; medians over the processes in the fast state "
           f"(Python within {stats.FAST_WINDOW - 1:.0%} of the {ordinal(stats.FAST_ANCHOR + 1)} fastest process's: \"fast\" says how many) with "
           f"{data['settings']['confidence']:.0%} intervals; \"all processes\": the ratio over every process. "
           f"Target (cuda-python #1580): under {fmt_ns(target_ns)} over C++. {data['seconds']:.0f} s.", "",
           "| case | C++ twin | Python | C++ | ratio | interval | over C++ | interval | fast | all processes |",
           "|---|---|--:|--:|--:|:-:|--:|:-:|--:|--:|"]
    for c in data["cases"]:
        mark = "" if c["over_ns"] < target_ns else " ⚠"
        every = f"×{c['all']['ratio']:.2f}" if "all" in c else "-"
        out.append(f"| `{c['name']}` | `{c['twin']}` | {fmt_ns(c['py_ns'])} | {fmt_ns(c['cpp_ns'])} | "
                   f"×{c['ratio']:.2f} | [{c['low']:.2f}, {c['high']:.2f}] | {fmt_ns(c['over_ns'])}{mark} | "
                   f"[{fmt_ns(c['over_low'])}, {fmt_ns(c['over_high'])}] | {c.get('fast', '-')}/{c['processes']} | "
                   f"{every} |")
    if data["errors"]:
        out += ["", "Not measured: " + "; ".join(f"`{n}`: {last_line(t)}"
                                                 for n, t in sorted(data["errors"].items()))]
    if data.get("lost"):
        out += ["", "Measured without some processes (a worker died or timed out there): " + "; ".join(
            f"`{n}`: {t}" for n, t in sorted(data["lost"].items()))]
    return "\n".join(out) + "\n"
