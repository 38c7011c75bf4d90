#!/usr/bin/env python3
"""The cold starts' evidence on a GPU box, in one call of at most ten minutes (docs/method.md, rules 18 and 19):

0. Whether the first context is a queue: ``FirstContext('bindings')``'s statement in fresh processes, one at a time
   and fifteen at once (a window's cold-start wave), net of ``python -c pass``. Where fifteen at once take much longer
   than one, the driver serialises what the first context does across processes, and a window's samples time the
   queue as well as the statement.
1. An A/A and a change, in one window of the paired engine (``cuda_bench.compare.window``, as ``cuda-bench window`` runs
   it): three builds of the box's cuda-core, A, A again and B, where B is A with one eager import added to
   ``cuda/core/__init__.py`` (``asyncio``, or the first of ``EAGER`` that cuda.core does not import already). Each
   build is a virtual environment that sees the box's site-packages (CuPy, cuda-bindings) through a ``.pth`` file
   and holds a copy of ``cuda/core`` of its own, so the two differ by that line alone. The step A -> A must flag
   nothing; A -> B must flag the imports of cuda.core and its first context. Every cold-start case and the
   harness floor, with the engine's settings (45 process pairs, the cold starts in the first 15). What the window
   took is the cold starts' cost per commit.
2. What ``import cuda.core`` imports in A and in B (``cuda_bench.run.imports``): the diff must name the eager import.
3. One tree built twice: ``cuda_core`` of the carried clone's main (and its ``cuda_pathfinder``), each time into an
   empty wheel cache (``cuda_bench.build.environment.prebuild``, cuda-bindings from the carried 13.3.1 wheel): the CPU seconds
   of each build and their spread (``cuda_bench.results.buildtime``). Skipped, with why, where the carry is missing or
   too little of the ten minutes is left.

    python3 scripts/coldstart_evidence.py OUT [--python PYTHON] [--no-build] [--carry DIR] [--wheels DIR:DIR]

PYTHON: the interpreter whose site-packages holds cuda-core, cuda-bindings and CuPy (default: this one). The
carry (made by ``scripts/offline_carry.sh`` on a machine with network): ``.carry/cuda-python.git``,
``.carry/cuda-headers-13.3.tar.xz``, and wheels in ``.whl/common`` and ``.whl/cu13``. Everything goes under OUT:
``summary.md`` (what to read) and ``evidence.tar.gz`` (every record and log). Runs on a machine without a GPU
too: the cases that need the driver skip, with why, and the imports are measured all the same.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cuda_bench.compare import paired, window  # noqa: E402
from cuda_bench.foundations import stats  # noqa: E402
from cuda_bench.foundations.text import interval  # noqa: E402
from cuda_bench.results import buildtime  # noqa: E402
from cuda_bench.run import imports  # noqa: E402

LIMIT = 560  # seconds this script may take of the call's ten minutes
BUILD_NEEDS = 220  # seconds two cuda_core builds on 16 cores need, at least
EAGER = ("asyncio", "email.mime.multipart", "http.client", "xml.dom.minidom")
COLD = [
    *(f"bench_coldstart.Import.time_import('{api}')" for api in ("pathfinder", "bindings", "core", "cupy")),
    "bench_coldstart.DriverLoad.time_driver_load('pathfinder')",
    *(f"bench_coldstart.FirstContext.time_first_context('{api}')" for api in ("bindings", "core", "cupy")),
    "bench_cpp.FirstContext.time_first_context('cpp')",
    "bench_harness.Floor.time_noop('noop')",
]
START = time.monotonic()


def say(message):
    print(f"[{time.monotonic() - START:5.0f} s] {message}", flush=True)


def site_of(python):
    """The site-packages of ``python`` that holds cuda.core."""
    # where the package is, not cuda.core.__file__: cuda-core 1.x copies its cu13 module's globals over its own
    where = ("import importlib.util as u; from pathlib import Path; "
             "print(Path(u.find_spec('cuda.core').origin).parents[2])")
    found = subprocess.run([python, "-c", where], capture_output=True, text=True)
    if found.returncode:
        sys.exit(f"coldstart_evidence: {python} cannot import cuda.core: {found.stderr.strip()[-300:]}")
    return Path(found.stdout.strip())


def build_env(python, site, folder, eager=None):
    """A venv of ``python`` that sees ``site`` after its own site-packages, with its own copy of cuda/core
    (``eager``: a module that copy imports first thing). Its interpreter."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(folder)], check=True)
    own = next((folder / "lib").glob("python3*/site-packages"))
    (own / "box_site.pth").write_text(f"{site}\n")
    shutil.copytree(site / "cuda" / "core", own / "cuda" / "core", ignore=shutil.ignore_patterns("__pycache__"))
    if eager:
        init = own / "cuda" / "core" / "__init__.py"
        init.write_text(f"import {eager}  # coldstart_evidence: an eager import, the change measured\n"
                        + init.read_text())
    python_of = folder / "bin" / "python"
    subprocess.run([str(python_of), "-c", "import cuda.core"], check=True)  # its own .pyc, written once
    return str(python_of)


def eager_module(python):
    """The first of EAGER that ``import cuda.core`` does not import already in ``python``."""
    held = {m[0] for m in imports.measure(python, runs=1)["modules"]}
    return next(m for m in EAGER if m not in held)


def case_line(case):
    return (f"| `{case['name']}` | {interval(case)} | {case['verdict']} | {len(case['pairs'])} | "
            f"{case['base_ns'] / 1e6:.1f} | {case['head_ns'] / 1e6:.1f} |")


def step_table(data, title):
    out = [f"### {title}", "", "| case | ratio [95 %] | verdict | pairs | base ms | head ms |",
           "|---|---|---|--:|--:|--:|"]
    out += [case_line(c) for c in data["cases"]]
    out += [f"- skipped `{n}`: {why}" for n, why in data["skipped"].items()]
    out += [f"- not measured `{n}`: {why.strip().splitlines()[-1]}" for n, why in data["errors"].items()]
    return out + [""]


def as_record(report):
    return {
        "cases": [c.summary() for c in report.cases],
        "skipped": report.skipped,
        "errors": report.errors,
        "lost": report.lost,
    }


def first_context_queue(python, lines, alone=10, width=15, rounds=2):
    """Part 0: FirstContext('bindings')'s statement, ``alone`` times one at a time, then ``rounds`` waves of
    ``width`` at once; the medians of their net times."""
    from concurrent.futures import ThreadPoolExecutor

    from benchmarks import _coldstart as cold
    from benchmarks.bench_coldstart import FirstContext

    statement = FirstContext().bindings()
    argv, empty, env = [python, "-c", statement], [python, "-c", "pass"], cold.child_env()

    def sample(_=None):
        return cold.net_sample(argv, empty, env) / 1e6

    sample()  # the file system's caches
    one = [sample() for _ in range(alone)]
    with ThreadPoolExecutor(width) as pool:
        many = [t for _ in range(rounds) for t in pool.map(sample, range(width))]
    found = {"alone_ms": one, "at_once_ms": many, "width": width}
    med_one, med_many = statistics.median(one), statistics.median(many)
    say(f"first context: {med_one:.0f} ms alone, {med_many:.0f} ms {width} at once")
    lines += ["## 0. The first context, one at a time and fifteen at once", "",
              f"`FirstContext('bindings')`'s statement, net of `python -c pass`: median **{med_one:.1f} ms** over "
              f"{alone} processes one at a time (range {min(one):.1f}-{max(one):.1f}); median **{med_many:.1f} ms** "
              f"over {rounds} waves of {width} at once (range {min(many):.1f}-{max(many):.1f}): "
              f"×{med_many / med_one:.2f}.", ""]
    return {"queue": found}


def measure_window(python, site, work, out, lines):
    """Parts 1 and 2: the window A, A, B and the imports of A and B."""
    a = build_env(python, site, work / "a")
    eager = eager_module(a)
    b = build_env(python, site, work / "b", eager)
    say(f"builds: A {a}, B {b} (B imports {eager} first thing in cuda/core/__init__.py)")
    sides = [paired.Side("a", "A", "a", a), paired.Side("a-again", "A again", "a", a),
             paired.Side("eager", f"A + import {eager}", "b", b)]
    settings = paired.Settings()
    report = window.run(sides, COLD, settings, out / "logs", progress=say)
    aa, change = (as_record(step) for step in report.steps)
    thresholds = stats.calibrate(aa["cases"])
    rejudged = [dict(c, verdict=stats.verdict(c["low"], c["high"], thresholds.get(c["name"], c["threshold"])))
                for c in change["cases"]]
    cold = {name: secs for name, secs in report.time["cases"].items()}
    per_commit = report.seconds / len(sides)
    found = {"window": {"aa": aa, "change": change, "rejudged": rejudged, "thresholds": thresholds,
                        "seconds": report.seconds, "cores": report.cores, "core_seconds_per_case": cold,
                        "settings": settings.describe(), "eager": eager, "versions": report.workers}}
    lines += [f"## 1. A window of A, A again, and A + `import {eager}` in cuda.core", "",
              f"{len(sides)} builds × {len(COLD)} cases, {settings.pairs} process groups ({settings.cold_pairs} for "
              f"the cold starts) on {len(report.cores)} cores: {report.seconds:.0f} s, {per_commit:.0f} s a build "
              "(the cold starts' cost per commit, with the floor and the workers' starts).", "",
              *step_table(aa, "A → A again (A/A: every case must read same)"),
              *step_table(change, f"A → A + import {eager} (default threshold {stats.DEFAULT_THRESHOLD:.0%})"),
              "With the thresholds the A/A above calibrates (`stats.calibrate`): "
              + ", ".join(f"`{c['name']}` {c['verdict']}" for c in rejudged if not c["control"]), "",
              "Core-seconds per case, summed over the groups: "
              + ", ".join(f"`{n}` {s:.0f}" for n, s in sorted(cold.items(), key=lambda kv: -kv[1])), ""]
    base, head = imports.measure(a), imports.measure(b)
    found["imports"] = {"a": base, "b": head, "diff": imports.diff(base, head)}
    lines += ["## 2. What `import cuda.core` imports, A → B", "", *imports.markdown(base, head)[2:], ""]
    return found


def built_twice(carry, wheels, work, out, lines):
    """Part 3: cuda_core of the carried clone's main built twice, each into an empty wheel cache."""
    from cuda_bench.build import environment

    repo = carry / "cuda-python.git"
    headers = carry / "cuda-headers-13.3.tar.xz"
    missing = [str(p) for p in (repo, headers) if not p.exists()]
    missing += [d for d in wheels if not Path(d).is_dir()]
    left = LIMIT - (time.monotonic() - START)
    if missing or left < BUILD_NEEDS:
        why = f"missing {', '.join(missing)}" if missing else f"{left:.0f} s left, under {BUILD_NEEDS} s"
        lines += ["## 3. One tree built twice", "", f"Not built: {why}.", ""]
        return {"skipped": why}
    home = work / "cuda-home"
    home.mkdir(exist_ok=True)
    with tarfile.open(headers) as tar:
        tar.extractall(home, filter="data")
    rev = subprocess.run(["git", "-C", str(repo), "rev-parse", "main"], capture_output=True, text=True,
                         check=True).stdout.strip()
    os.environ.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=" ".join(str(Path(d).resolve()) for d in wheels),
                      CUDA_BENCH_CUDA_HOME=str(home / "nvidia" / "cu13"), CUDA_BENCH_BINDINGS="13.3.1")
    made = []
    for k in (1, 2):
        os.environ["CUDA_BENCH_CACHE"] = str(work / f"cache{k}" / "wheels")
        say(f"build {k} of {rev[:9]} into an empty wheel cache")
        (record,) = environment.prebuild(repo, [rev], 1, out / f"build{k}-logs", "13.3.1")
        made.append(record)
        if not record.get("ok"):
            lines += ["## 3. One tree built twice", "", f"Build {k} failed: {record.get('error')}", ""]
            return {"builds": made}
    compiles = buildtime.compiles_of(made)
    lines += ["## 3. One tree built twice", "", f"`{rev[:9]}`, each build into an empty wheel cache, "
              f"cuda-bindings 13.3.1 ({buildtime.UNPAIRED}):", ""]
    for package in dict.fromkeys(c["package"] for c in compiles):
        cpus = [c["cpu_seconds"] for c in compiles if c["package"] == package]
        walls = [c["wall_seconds"] for c in compiles if c["package"] == package]
        spread = buildtime.spread(compiles, package)
        lines.append(f"- `{package}`: CPU seconds {', '.join(map(str, cpus))}; wall {', '.join(map(str, walls))}"
                     + (f"; spread ×{spread[0]:.3f}" if spread else ""))
    versions = compiles[0]["versions"] if compiles else {}
    lines += ["", f"Versions: {json.dumps(versions)}; jobs {compiles[0]['jobs'] if compiles else '?'}."]
    if any(c["ccache"] for c in compiles):
        lines.append("Compiled through ccache: the CPU seconds measure its cache, and no spread is judged.")
    lines.append("")
    return {"builds": made, "compiles": compiles}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--carry", default=str(ROOT / ".carry"))
    parser.add_argument("--wheels", default=f"{ROOT / '.whl' / 'common'}:{ROOT / '.whl' / 'cu13'}")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve() / "evidence"
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="coldstart-evidence-"))
    lines = ["# Cold starts: the evidence", "",
             f"`python3 scripts/coldstart_evidence.py {' '.join(argv or sys.argv[1:])}` on {os.uname().nodename}, "
             f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", ""]
    found = {}
    try:
        site = site_of(args.python)
        say(f"cuda.core from {site}")
        parts = [("queue", lambda: found.update(first_context_queue(args.python, lines))),
                 ("window", lambda: found.update(measure_window(args.python, site, work, out, lines)))]
        if not args.no_build:
            wheels = args.wheels.split(":")
            parts.append(("builds", lambda: found.update(builds=built_twice(Path(args.carry), wheels, work, out,
                                                                            lines))))
        for name, part in parts:  # a part that fails is said, and the next one still runs
            try:
                part()
            except Exception as exc:
                say(f"{name} failed: {exc!r}")
                lines += [f"**{name} failed**: `{exc!r}`", ""]
                found[f"{name}_error"] = repr(exc)
    finally:
        lines.append(f"Took {time.monotonic() - START:.0f} s.")
        (out / "evidence.json").write_text(json.dumps(found, indent=1, default=str))
        (out.parent / "summary.md").write_text("\n".join(lines) + "\n")
        with tarfile.open(out.parent / "evidence.tar.gz", "w:gz") as tar:
            tar.add(out, arcname="evidence")
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
