"""Stage 4, compare: two commits measured by the paired engine, and what the tool says about them.

Three uses of one engine (``cuda_bench.compare.paired``):

* the pull-request gate, ``cuda-bench compare BASE HEAD``: a comment that leads with the cases that
  changed, each with its ratio and interval; exit status 1 only for a regression, a case whose whole
  interval lies beyond its threshold;
* calibration, ``cuda-bench aa COMMIT``: the same build on both sides; the farthest each case's
  interval strays from 1 sets that case's threshold on this machine
  (``results/<machine>/calibration.jsonl``);
* the history (``cuda_bench.compare.steps``): each newly measured commit paired with the previous
  measured one on the same machine (``results/<machine>/steps.jsonl``), which the dashboard flags
  from.

Every run also writes ``summary.json`` (``cuda_bench.compare.summaries`` makes it): the kind, both
commits, the wall time, and per case the ratio, the interval and the verdict; after a pull-request
comparison, both commits' work per call (``counts``: counted in a pass of its own,
``cuda_bench.compare.countpass``), and the comment names each case whose work changed.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from cuda_bench.build import environment, toolkit, trees
from cuda_bench.compare import comment, paired, summaries
from cuda_bench.compare.paired import regressions
from cuda_bench.foundations import machine, stats
from cuda_bench.foundations.paths import PAIRED_ENVS, label
from cuda_bench.foundations.status import INCOMPLETE, OK, REGRESSION
from cuda_bench.foundations.suite import cases as suite_cases
from cuda_bench.foundations.text import interval
from cuda_bench.results import budgets
from cuda_bench.run import asvrun

#: what the gate does on a machine without a GPU (``suite.without_gpu``: the command's first line)
WITHOUT_GPU = (
    "the paired engine times the cases that need none, and no budget is judged (an over-C++ run "
    "needs one)"
)


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
    commits = {rev: trees.resolve(repo, rev) for rev in revs}
    unique = list(dict.fromkeys(commits.values()))
    jobs = max(1, len(machine.cores()) // len(unique))

    def one(commit):
        path = PAIRED_ENVS / f"{commit[:12]}-{label(bindings)}-{trees.python_tag()}"
        ready = (path / "cuda-bench-env.json").exists()
        progress(
            f"compare: environment for {commit[:9]} ({'reused' if ready else 'building'}: {path})"
        )
        record = environment.environment(
            repo,
            commit,
            path,
            bindings,
            requirements,
            system_site,
            jobs,
            Path(log_dir) / f"build-{commit[:12]}.log",
        )
        if not ready:
            progress(f"compare: environment for {commit[:9]} ready in {record['seconds']} s")
        return commit, record

    built = dict(toolkit.in_builds(one, unique, len(unique)))
    return {rev: built[commit] for rev, commit in commits.items()}


def measure(
    repo,
    base,
    head,
    *,
    bindings,
    requirements=(),
    system_site=None,
    settings=None,
    bench=(),
    thresholds=None,
    log_dir,
    progress=None,
    env=None,
):
    """Build (or reuse) both environments and run the paired engine: (paired.Report, build seconds).
    ``env``: {"base"/"head": extra environment variables for that side's workers}."""
    progress = progress or (lambda m: print(m, file=sys.stderr, flush=True))
    settings = settings or paired.Settings()
    names = case_names(bench, settings.benchmark_dir)
    start = time.monotonic()
    envs = environments(repo, [base, head], bindings, requirements, system_site, log_dir, progress)
    built = round(time.monotonic() - start, 1)
    sides = [
        paired.Side(
            name,
            rev,
            envs[rev]["commit"],
            envs[rev]["python"],
            env=dict((env or {}).get(name, {})),
            record=envs[rev],
        )
        for name, rev in (("base", base), ("head", head))
    ]
    return paired.run(
        sides, names, settings, Path(log_dir) / "workers", thresholds, progress
    ), built


def pair(
    repo,
    base,
    head,
    *,
    bindings,
    requirements=(),
    system_site=None,
    kind,
    settings,
    bench=(),
    thresholds=None,
    log_dir,
    command=None,
    info=None,
    progress=None,
    env=None,
    expected=(),
    always=False,
):
    """Two commits made into a paired record, as the pull-request gate, the history's steps and
    asv's ``continuous`` make one: (record, the paired.Report or None). Identical builds
    (``summaries.identical``) are not measured (their record says so) unless ``always`` (an A/A) or
    ``env`` gives a side variables of its own; else both are built (or taken from the wheel cache)
    and measured by the paired engine. The record names the cuda-bindings both sides were built
    with."""
    sides = summaries.built_from(repo, base, head, bindings)
    if not always and summaries.identical(sides) and not any((env or {}).values()):
        data = summaries.identical_summary(
            repo, base, head, kind, sides, bindings, settings, command, info
        )
        return data, None
    report, built = measure(
        repo,
        base,
        head,
        bindings=bindings,
        requirements=requirements,
        system_site=system_site,
        settings=settings,
        bench=bench,
        thresholds=thresholds,
        log_dir=log_dir,
        progress=progress,
        env=env,
    )
    data = summaries.summary(report, kind, expected, built, command, info, sides) | {
        "bindings": bindings
    }
    return data, report


def gate(
    repo,
    base,
    head,
    *,
    conf,
    kind,
    settings,
    bench,
    thresholds,
    out,
    command,
    info,
    progress,
    env=None,
    expected=(),
    over_cpp_dir=None,
):
    """Two revisions through the paired engine, as the pull-request gate decides (:func:`pair`):
    (record, the comment, the paired.Report or None). The record and the comment are written to
    ``out`` (summary.json, summary.md) before anything else happens. ``conf``: the derived
    asv.conf.json, as a dict. With ``over_cpp_dir`` (results/<machine>), the record's ``budgets``
    judge the head against ``budgets.json5`` from its over-C++ records there
    (``budgets.at_commit``): the paired step times both builds' Python, not their C++ twins, so a
    head without such a record is not judged, and the comment says so."""
    data, report = pair(
        repo,
        base,
        head,
        bindings=asvrun.bindings_of(conf),
        requirements=asvrun.requirements(conf),
        system_site=asvrun.system_site_of(conf),
        kind=kind,
        settings=settings,
        bench=bench,
        thresholds=thresholds,
        log_dir=Path(out) / "logs",
        command=command,
        info=info,
        progress=progress,
        env=env,
        expected=expected,
        always=kind == "aa",
    )
    if over_cpp_dir is not None and kind != "aa":
        found = budgets.read()
        data["budgets"] = budgets.against_base(
            budgets.at_commit(over_cpp_dir, data["head"], found),
            budgets.at_commit(over_cpp_dir, data["base"], found),
            slower={c["name"] for c in regressions(data)},
            identical=bool(data.get("identical")),
        )
        progress(f"compare: budgets: {budgets.summary_line(data['budgets'])}")
    if data.get("identical"):
        progress(
            f"{base} and {head}: identical builds ({comment.built_from_text(data['built_from'])}): "
            "nothing measured"
        )
    return data, summaries.write(out, data), report


def exit_status(data):
    """A paired record's exit status (``cuda_bench.foundations.status``): REGRESSION (1): a
    regression (a call the change took over its budget is one: ``budgets.against_base`` takes a call
    over only where the step flags its case slower); INCOMPLETE (2): a case failed (an error, a dead
    worker) or lost some process pairs; OK (0): none of these (a case one build skips is listed, not
    failed)."""
    if regressions(data):
        return REGRESSION
    return INCOMPLETE if summaries.incomplete(data) else OK


def calibration_record(data):
    """A calibration line for ``results/<machine>/calibration.jsonl`` from an A/A summary (the same
    commit on both sides, or two builds of the same behaviour)."""
    if data["kind"] != "aa":
        raise CompareError("calibration needs an A/A run")
    return {
        "base": data["base"],
        "head": data["head"],
        "date": data["date"],
        "settings": data["settings"],
        "thresholds": stats.calibrate(data["cases"]),
    }


def window_calibration_record(found, builds):
    """A calibration line of the window engine from the step records of one commit measured
    ``builds`` times in one pass: per case the highest of its steps' :func:`stats.calibrate`."""
    thresholds = {}
    for data in found:
        for name, value in stats.calibrate(data["cases"]).items():
            thresholds[name] = max(value, thresholds.get(name, 0))
    return {
        "base": found[0]["base"],
        "head": found[-1]["head"],
        "date": found[-1]["date"],
        "settings": found[-1]["settings"],
        "thresholds": thresholds,
        "engine": "window",
        "builds": builds,
    }


def window_aa_lines(found, paired):
    """What a window A/A says against the two-build thresholds ``paired`` (the machine's): per step,
    the cases whose interval reached past their threshold and the cases it flagged."""
    lines = []
    for i, data in enumerate(found, 1):
        cases = [c for c in data["cases"] if not c.get("control")]
        reach = [
            c
            for c in cases
            if max(c["high"] - 1, 1 / c["low"] - 1) > paired.get(c["name"], stats.DEFAULT_THRESHOLD)
        ]
        flagged = [c for c in cases if c["verdict"] != "same"]
        lines.append(
            f"window A/A step {i}: {len(cases)} cases; {len(reach)} reached past their two-build "
            f"threshold, {len(flagged)} flagged"
            + "".join(f"\n  {c['verdict']}: {c['name']} {interval(c)}" for c in flagged)
        )
    return lines
