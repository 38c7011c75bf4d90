"""Stage 1, build: cuda-python's packages from a monorepo checkout, for asv and for the paired
engine.

    python -m cuda_bench.build build   SRC OUT   # wheels of SRC's packages into OUT
                                                 # (asv's build_command)
    python -m cuda_bench.build install OUT       # install OUT's wheels into this environment
                                                 # (install_command)
    python -m cuda_bench.build prebuild REPO REV [REV ...] [--parallel N]
    python -m cuda_bench.build carry REPO DEST REV [REV ...]   # their cache entries, for a machine
                                                               # to reuse

``build`` builds, in order, whichever of ``cuda_pathfinder/``, ``cuda_bindings/`` and ``cuda_core/``
the checkout has, each one against the ones before it (``--no-build-isolation``, so ``cuda_core``
compiles against the bindings of the same commit, not PyPI's newest). Wheels are cached by the git
tree hash of the package's directory, so a commit that only touches ``cuda_core/`` rebuilds only
``cuda_core``. :func:`environment` makes a virtual environment with one commit installed (the paired
engine's sides).

Environment:

``CUDA_BENCH_BINDINGS``
    ``source`` (default): build cuda_bindings from the checkout (needs CUDA headers matching the
    commit).
    A version such as ``13.3.1``: install that cuda-bindings wheel (from the index, or from
    ``PIP_FIND_LINKS`` offline) and build only cuda_pathfinder and cuda_core. Much faster.
    ``auto``: the same, with the wheel each commit supports: ``CUDA_BENCH_BINDINGS_13`` (default
    13.3.1) where cuda_core declares a ``cu13`` extra, else ``CUDA_BENCH_BINDINGS_12`` (default
    12.9.10), for a history that spans CUDA 12 and 13 (the release ladder).
``CUDA_BENCH_SYSTEM_SITE``
    a site-packages directory appended to the environment's path at install (offline GPU boxes that
    have CuPy and numpy installed system-wide).
``CUDA_BENCH_CUDA_HOME``
    CUDA headers to use, whatever their version. Without it the build looks for headers of the CUDA
    version the commit (or the bindings wheel) needs in ``CUDA_HOME``, ``CUDA_PATH``,
    ``/usr/local/cuda`` and its cache, and fetches them from PyPI (``cuda-toolkit`` wheels) when
    none matches.
``CUDA_BENCH_CACHE``
    wheel cache; default ``~/.cache/cuda-python-bench/wheels``.
``CUDA_BENCH_JOBS``
    parallel compile jobs; default: all cores.
``CUDA_BENCH_PROGRESS``
    a file to append one line to when a package starts and ends building (asv keeps a build step's
    output to itself; ``scripts/bench run`` shows these lines as they come); an empty line first,
    which ends the "Building <commit>" line asv leaves open while the step runs.

An interrupt (Ctrl-C, or SIGTERM, which the build step takes as Ctrl-C) stops ``pip wheel`` and
everything it runs (a process group of its own), then removes the hidden folder beside the cache
entry that held the wheel being made and every temporary folder of pip, the build backend and the
compilers (their ``TMPDIR``): no half-made cache entry and no temporary folder stays. A build
stopped from outside (``stop_builds``) gets SIGTERM and a few seconds for that before it is killed.

Every step is logged with its time to stderr and to ``OUT/build.json``. Standard library only: this
module runs inside the benchmark environments.

``prebuild`` fills the same wheel cache for several commits at once, before ``asv run`` (which
builds one commit after another): each commit in its own checkout and virtual environment, ``N`` at
a time, the cores shared among them. asv's build step then finds every package in the cache. The
environments must use the Python that asv's will (the cache key names the interpreter).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cuda_bench.build import toolkit, trees, wheels
from cuda_bench.build.toolkit import BuildError, log, progress, run
from cuda_bench.foundations import process
from cuda_bench.foundations.paths import ROOT


def checkout(repo, sha, dest):
    """A working tree of ``repo`` at ``sha`` in ``dest`` (sharing the repository's objects)."""
    run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(dest)])
    run(["git", "-C", str(dest), "checkout", "-q", "--detach", sha])


def environment(
    repo, rev, path, bindings, requirements=(), system_site=None, jobs=None, log_path=None
):
    """A virtual environment at ``path`` with cuda-python at ``rev`` installed, built through the
    wheel cache; reused when it exists. Returns its record (``python``, ``commit``, the build
    record, what got installed).

    ``requirements`` are installed first (numpy, CuPy: asv.conf.json's matrix); ``system_site``
    instead links a site-packages that has them. The build runs in the new environment itself, as
    asv's build step does."""
    path = Path(path)
    record_path = path / "cuda-bench-env.json"
    try:
        return json.loads(record_path.read_text())
    except FileNotFoundError:
        pass
    except (OSError, ValueError):  # unreadable: built again below
        print(f"{record_path} does not parse: building {rev} again", file=sys.stderr)
    sha = trees.resolve(repo, rev)
    start = time.monotonic()
    if path.exists():
        shutil.rmtree(path)  # an earlier attempt that did not finish
    path.mkdir(parents=True)
    log_path = Path(log_path or path / "build.log")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    python = path / "bin" / "python"
    env = dict(os.environ, CUDA_BENCH_BINDINGS=bindings, PYTHONPATH=str(ROOT))
    env.pop("CUDA_BENCH_PROGRESS", None)
    if jobs:
        env["CUDA_BENCH_JOBS"] = str(jobs)
    if system_site:
        env["CUDA_BENCH_SYSTEM_SITE"] = str(system_site)
    try:
        checkout(repo, sha, path / "src")
        run([sys.executable, "-m", "venv", str(path)])
        if requirements:
            run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    *requirements,
                ]
            )
        with open(log_path, "w") as log_file:
            for step in (
                ["build", str(path / "src"), str(path / "wheels")],
                ["install", str(path / "wheels")],
            ):
                if step_in(python, step, env, log_file, f"{rev} ({sha[:9]})") != 0:
                    raise BuildError(
                        f"{rev} ({sha[:9]}): {step[0]} failed; log: {log_path}\n"
                        + "\n".join(log_path.read_text().splitlines()[-15:])
                    )
    finally:
        shutil.rmtree(path / "src", ignore_errors=True)
    record = {
        "rev": rev,
        "commit": sha,
        "python": str(python),
        "bindings": bindings,
        "seconds": round(time.monotonic() - start, 1),
        "build": json.loads((path / "wheels" / "build.json").read_text()),
        "installed": json.loads((path / "wheels" / "installed.json").read_text()),
    }
    process.write_whole(record_path, json.dumps(record, indent=1))  # its presence means "built"
    return record


def step_in(python, step, env, log_file, what):
    """``python -m cuda_bench.build STEP ...`` in an environment (``python`` its interpreter), in a
    process group of its own that an interrupt stops with every other build
    (``toolkit.stop_builds``): its exit status. A build stopped so, or asked to start after the
    builds were stopped, is an interrupt (``process.Interrupted``, naming ``what`` it builds), not a
    failure: the command says it once, and names no log of it."""
    # stop_builds either sees this build or stops it from starting
    with toolkit.STARTING:
        if toolkit.STOPPING:
            raise process.Interrupted(f"{what}: stopped")
        proc = subprocess.Popen(
            [str(python), "-m", "cuda_bench.build", *step],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        toolkit.CHILDREN.add(proc)
    try:
        code = proc.wait()
    finally:
        toolkit.CHILDREN.discard(proc)
    if toolkit.STOPPING:
        raise process.Interrupted(f"{what}: stopped")
    return code


def prebuild(repo, revs, parallel, log_dir, bindings):
    """Build ``revs`` of ``repo`` into the cache, ``parallel`` at a time, with ``bindings`` (a
    ``CUDA_BENCH_BINDINGS`` value); returns the records, in order. Each build's log goes into
    ``log_dir``; without one, a failed build's log is kept beside the wheel cache
    (``prebuild-logs``), where its line names it, and the others go."""

    work = Path(tempfile.mkdtemp(prefix="cuda-bench-prebuild-"))
    keep_all = log_dir is not None
    log_dir = Path(log_dir or toolkit.cache_root().parent / "prebuild-logs")
    log_dir.mkdir(parents=True, exist_ok=True)
    jobs = max(1, (os.cpu_count() or 1) // parallel)
    done = []

    def one(i, rev):
        start = time.monotonic()
        log_path = log_dir / f"prebuild-{i}-{re.sub(r'[^A-Za-z0-9._-]+', '_', rev)}.log"
        try:
            record = environment(repo, rev, work / str(i), bindings, jobs=jobs, log_path=log_path)[
                "build"
            ]
        except (BuildError, OSError, ValueError) as exc:
            record = {"commit": rev, "ok": False, "error": str(exc).splitlines()[0], "packages": {}}
        record["rev"] = rev
        record["wall_seconds"] = round(time.monotonic() - start, 1)
        if record.get("ok") and not keep_all:
            log_path.unlink(missing_ok=True)
        done.append(record)
        what = ", ".join(f"{k} {v['action']}" for k, v in record["packages"].items())
        status = (
            "ok" if record.get("ok") else f"FAILED ({record.get('error', 'see ' + str(log_path))})"
        )
        progress(
            f"prebuild [{len(done)}/{len(revs)}] {rev}: {status} in {record['wall_seconds']} s; "
            f"{what}"
        )
        return record

    order, needed = build_order(repo, revs, bindings)
    progress(
        f"prebuild: {len(revs)} commits need {needed}, {parallel} at a time, {jobs} compile jobs "
        f"each, cuda-bindings {bindings}; "
        + (f"logs in {log_dir}" if keep_all else f"a failed build's log is kept in {log_dir}")
    )
    try:
        made = toolkit.in_builds(lambda i: one(i, revs[i]), order, parallel)
        return [made[order.index(i)] for i in range(len(revs))]
    finally:  # also on an interrupt: the checkouts and venvs of the builds go
        shutil.rmtree(work, ignore_errors=True)


def build_order(repo, revs, bindings):
    """(indices of ``revs`` in the order to start them, what they need built in words). Each
    distinct package tree missing from the cache is built once (``wheels.one_build_of``): a commit
    that needs a tree a commit before it builds starts after every commit that waits for nothing,
    and then takes the shared wheels from the cache."""
    seen, first, later = set(), [], []
    counts = dict.fromkeys(trees.PACKAGES, 0)
    for i, rev in enumerate(revs):
        try:
            keys = trees.cache_keys(repo, trees.resolve(repo, rev), bindings)
        except BuildError:  # its own build says so, in its line
            keys = []
        missing = [(p, k) for p, k in keys if not any((toolkit.cache_root() / p / k).glob("*.whl"))]
        new = [item for item in missing if item not in seen]
        seen.update(new)
        for package, _ in new:
            counts[package] += 1
        (later if len(new) < len(missing) else first).append(i)
    built = [f"{n} {p}" for p, n in counts.items() if n]
    words = (
        (", ".join(built) + " build" + ("s" if sum(counts.values()) > 1 else ""))
        if built
        else ("no build (every package in the wheel cache)")
    )
    return first + later, words


def carry(repo, revs, dest, bindings):
    """Copy the wheel cache entries that environments of ``revs`` take into ``dest`` (laid out as
    the cache), for a machine that is to reuse them (a GPU box without network:
    ``scripts/offline_carry.sh``); an entry carried before gets what it lacks (what compiled its
    wheel, ``wheels.BUILT_WITH``). Returns (copied, missing) lists of ``package/key``."""
    copied, missing = [], []
    for rev in revs:
        for package, key in trees.cache_keys(repo, trees.resolve(repo, rev), bindings):
            source, target = toolkit.cache_root() / package / key, Path(dest) / package / key
            if not any(source.glob("*.whl")):
                missing.append(f"{package}/{key}")
            elif any(not (target / f.name).exists() for f in source.iterdir()):
                shutil.copytree(source, target, dirs_exist_ok=True)
                copied.append(f"{package}/{key}")
    return copied, missing


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m cuda_bench.build", description=" ".join(__doc__.split("\n\n")[0].split())
    )
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build wheels of a checkout")
    b.add_argument("src")
    b.add_argument("out")
    i = sub.add_parser("install", help="install built wheels")
    i.add_argument("out")
    p = sub.add_parser("prebuild", help="fill the wheel cache for several commits, in parallel")
    p.add_argument("repo")
    p.add_argument("revs", nargs="+")
    p.add_argument("--parallel", type=int, default=4)
    p.add_argument("--logs", help="keep each build's log here")
    c = sub.add_parser("carry", help="copy the cache entries of REVs' environments into DEST")
    c.add_argument("repo")
    c.add_argument("dest")
    c.add_argument("revs", nargs="+")
    args = parser.parse_args(argv)
    # as Ctrl-C: what runs is stopped, what was half made removed
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        if args.command == "carry":
            bindings = os.environ.get("CUDA_BENCH_BINDINGS", "source")
            copied, missing = carry(Path(args.repo).resolve(), args.revs, args.dest, bindings)
            log(
                f"carry: {len(copied)} cache entries copied to {args.dest}"
                + "".join(f"\n  not in the cache (build it first: prebuild): {m}" for m in missing)
            )
            return 1 if missing else 0
        if args.command == "prebuild":
            records = prebuild(
                Path(args.repo).resolve(),
                args.revs,
                args.parallel,
                args.logs,
                os.environ.get("CUDA_BENCH_BINDINGS", "source"),
            )  # as the build step
            return 0 if all(r.get("ok") for r in records) else 1
        if args.command == "build":
            wheels.build(args.src, args.out)
        else:
            wheels.install(args.out)
    except BuildError as exc:
        log(f"FAILED: {exc}")
        return 1
    # Ctrl-C or SIGTERM: what it ran is stopped, its temporary folders removed
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    return 0


def _interrupted(signum, frame):
    name = signal.Signals(signum).name
    wheels.stopped(name)  # the record first: asv kills the step a second later
    raise KeyboardInterrupt(name)
