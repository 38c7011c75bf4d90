"""Stage 2, run: drive asv. The suite over commits of cuda-python, into the history.

``asv.conf.json`` is the project's configuration; a run's overrides (a local clone, a cuda-bindings wheel,
a system site-packages, another results directory) go into a derived copy, ``.asv/asv.conf.local-PID.json``
for the command's life, never into the file itself. Timed asv commands run pinned to one core, with
address-space randomisation off and a fixed hash seed (``cuda_bench.machine``); the build step's progress reaches the console while asv
builds. After ``asv run``, each newly measured commit is compared, paired, with the previous measured commit
of the same machine (``cuda_bench.compare``): those steps are what the dashboard flags.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from cuda_bench import build, machine, results
from cuda_bench.layout import BUILDS, CONF, NO_GPU_RESULTS, ROOT, WORK, is_release_tag, local_conf, result_files


class RunError(Exception):
    """A problem the user can fix: printed as one line, no traceback."""


def load_conf(path=CONF):
    import json5  # asv's own config reader: the file has comments

    return json5.loads(Path(path).read_text())


def asv_mirror(conf):
    """Where asv keeps its clone of a remote project: ``project``, next to the (derived) config file."""
    return WORK / conf["project"]


def derived_conf(repo=None, bindings=None, results_dir=None, system_site=None):
    """asv.conf.json with this run's overrides, written to .asv/ with every path made absolute."""
    conf = load_conf()
    if repo:
        path = Path(repo).expanduser().resolve()
        if not (path / ".git").exists() and not (path / "HEAD").exists():
            raise RunError(f"--repo {path} is not a git repository")
        conf["repo"] = str(path)
    matrix = conf.setdefault("matrix", {})
    env = matrix.setdefault("env", {})
    if bindings:
        env["CUDA_BENCH_BINDINGS"] = [bindings]
    if results_dir:
        conf["results_dir"] = str(Path(results_dir).resolve())
    if system_site:
        site = Path(system_site).resolve()
        if not site.is_dir():
            raise RunError(f"--system-site {site} is not a directory")
        env["CUDA_BENCH_SYSTEM_SITE"] = [str(site)]
        for name in ("numpy", "cupy-cuda13x", "cupy-cuda12x"):
            matrix.get("req", {}).pop(name, None)
    for key in ("env_dir", "results_dir", "html_dir", "benchmark_dir"):  # an absolute one stays as it is
        conf[key] = str((ROOT / conf[key]).resolve())
    for key in ("build_command", "install_command", "uninstall_command"):
        conf[key] = [cmd.replace("{conf_dir}", str(ROOT)) for cmd in conf.get(key, [])]
    path = local_conf()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(conf, indent=1))
    atexit.register(path.unlink, missing_ok=True)  # once per write: unlinking twice is harmless
    return path


def requirements(conf):
    """What a benchmark environment installs besides cuda-python (asv.conf.json's matrix ``req``, without
    asv's own runner): the paired engine's environments hold the same."""
    out = []
    for name, versions in conf.get("matrix", {}).get("req", {}).items():
        if name.startswith("pip+") or name.startswith("asv"):
            continue
        version = (versions or [""])[0]
        out.append(f"{name}=={version}" if version else name)
    return out


def bindings_of(conf):
    return conf.get("matrix", {}).get("env", {}).get("CUDA_BENCH_BINDINGS", ["source"])[0]


def system_site_of(conf):
    found = conf.get("matrix", {}).get("env", {}).get("CUDA_BENCH_SYSTEM_SITE")
    return found[0] if found else None


def check_reachable(repo):
    """A remote repository must answer before asv tries to clone it (asv would print a long traceback)."""
    if Path(repo).exists():
        return
    try:
        proc = subprocess.run(["git", "ls-remote", "--heads", repo], capture_output=True, text=True, timeout=30,
                              env=dict(os.environ, GIT_TERMINAL_PROMPT="0"))
        reason = proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else ""
        ok = proc.returncode == 0
    except subprocess.TimeoutExpired:
        ok, reason = False, "no answer in 30 s"
    if not ok:
        raise RunError(f"cannot reach {repo} ({reason or 'git ls-remote failed'}). Point --repo at a local clone "
                       "(scripts/shallow_clone.sh makes a small one), or see README 'GPU boxes without network'")


def local_repo(conf):
    """A local git repository of the configured project for the paired engine: the configured path, or
    asv's own mirror clone (made or refreshed here when the project is a URL)."""
    repo = conf["repo"]
    if Path(repo).exists():
        return Path(repo)
    mirror = asv_mirror(conf)
    check_reachable(repo)
    if mirror.exists():
        subprocess.run(["git", "-C", str(mirror), "fetch", "-q", "--prune", "origin", "+refs/*:refs/*"], check=False)
    else:
        subprocess.run(["git", "clone", "-q", "--mirror", repo, str(mirror)], check=True)
    return mirror


@contextlib.contextmanager
def build_progress():
    """While asv builds, show the build step's progress lines (``CUDA_BENCH_PROGRESS``) on stderr."""
    fd, path = tempfile.mkstemp(prefix="build-progress-", dir=WORK if WORK.exists() else None)
    os.close(fd)
    stop = threading.Event()

    def tail():
        with open(path) as f:
            while True:
                line = f.readline()
                if line:  # an empty line only ends the line asv left open
                    print(f"bench: build: {line.rstrip()}" if line.strip() else "", file=sys.stderr, flush=True)
                elif stop.is_set():
                    return
                else:
                    time.sleep(0.5)

    thread = threading.Thread(target=tail, daemon=True)
    thread.start()
    try:
        yield {"CUDA_BENCH_PROGRESS": path}
    finally:
        stop.set()
        thread.join(timeout=5)
        os.unlink(path)


def asv(*args, config=CONF, timed=False, affinity=None, env=None):
    """Run asv (with ``config``). ``timed``: a command that measures: pinned to ``affinity``, ASLR off, fixed
    hash seed."""
    cmd = [sys.executable, "-m", "asv", *args, "--config", str(config)]
    full_env = dict(os.environ)
    if timed:
        cmd = [*machine.no_aslr_prefix(), *cmd[:4], *machine.cpu_affinity(affinity), *cmd[4:]]
        full_env = machine.timed_env(full_env)
    full_env.update(env or {})
    print("bench: $ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.call(cmd, cwd=ROOT, env=full_env)


def record_builds(machine_name, conf_path):
    """Keep what each commit was built from (package versions, bindings, build times) next to the results:
    ``results/<machine>/builds.jsonl``, one line per commit and environment."""
    conf = json.loads(Path(conf_path).read_text())
    env_dir, folder = Path(conf["env_dir"]), Path(conf["results_dir"]) / machine_name
    path = folder / BUILDS
    seen = {(row["commit"], row["env"]): row for row in results.read_lines(path)}
    for made in env_dir.glob("*/asv-build-cache/*/wheels/build.json"):
        env_path = made.parents[3]
        try:
            row = json.loads(made.read_text())
            installed = made.with_name("installed.json")
            if installed.exists():
                row["installed"] = json.loads(installed.read_text())
            info = env_path / "asv-env-info.json"
            if info.exists():
                info = json.loads(info.read_text())
                row.update(python=info.get("python"), env_vars=info.get("build_env_vars"))
        except (OSError, ValueError) as exc:
            results.warn(f"{made.parent}: {exc}; that build is not recorded in {BUILDS}")
            continue
        row["env"] = env_path.name
        seen[(row["commit"], row["env"])] = row
    if seen:
        folder.mkdir(parents=True, exist_ok=True)
        # the old rows stay whole until the new ones are; rows another run wrote meanwhile come back next time,
        # from the build caches
        build.write_whole(path, "".join(json.dumps(row, sort_keys=True) + "\n" for row in seen.values()))


def release_ladder(repo, branch="main"):
    """The commits of every cuda-core release tag (no release candidates), oldest first, then the branch
    head: what ``asv run HASHFILE:`` should run to show latency across releases."""
    proc = subprocess.run(["git", "ls-remote", str(repo), "refs/tags/cuda-core-v*", f"refs/heads/{branch}"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RunError(f"cannot list the tags of {repo}: {proc.stderr.strip()[-300:]}")
    tags, head = {}, None
    for line in proc.stdout.splitlines():
        sha, ref = line.split("\t")
        if ref == f"refs/heads/{branch}":
            head = sha
            continue
        tag = ref[len("refs/tags/"):].removesuffix("^{}")
        if is_release_tag(tag):
            # an annotated tag is listed twice; its peeled ("^{}") line names the commit
            if ref.endswith("^{}") or tag not in tags:
                tags[tag] = sha
    ordered = sorted(tags, key=lambda t: tuple(int(x) for x in t.split("v")[-1].split(".")))
    commits = [(tag, tags[tag]) for tag in ordered]
    if head and head not in {sha for _, sha in commits}:
        commits.append((branch, head))
    return commits


def measured_in(results_dir, machine_name, conf):
    """The commits this machine measured in the environment ``conf`` (a derived asv.conf.json) builds: the
    same environment variables (cuda-bindings, system site)."""
    env = {key: values[0] for key, values in conf.get("matrix", {}).get("env", {}).items()}
    found = set()
    for path in result_files(Path(results_dir) / machine_name):
        data = results.load(path)
        if data is not None and (data.get("env_vars") or {}) == env:
            found.add(data["commit_hash"])
    return found


def newer_releases(commits, measured):
    """Of the release ladder's ``commits`` (:func:`release_ladder`'s, oldest first): the newest release whose
    commit is in ``measured`` as (tag, commit), or None; and the releases after it. A release of an older
    series tagged later (0.4.3 after 0.5.1) is not newer; the branch head is left to the nightly run of main."""
    releases = [(tag, sha) for tag, sha in commits if is_release_tag(tag)]
    newest = max((i for i, (_, sha) in enumerate(releases) if sha in measured), default=None)
    return (None, []) if newest is None else (releases[newest], releases[newest + 1:])


def release_chain(newest, newer, measured):
    """The ladder's steps ``ladder --new`` makes: (release, next release) from ``newest`` through each of
    ``newer`` that asv measured (``measured``), skipping one it could not; not the steps by commit date that
    :func:`new_steps` finds, which would pair a new release with main's head where a full ladder measured it."""
    chain = [newest[1]] + [sha for _, sha in newer if sha in measured]
    return list(zip(chain, chain[1:]))


def release_tags(repo):
    """{commit: its cuda-core-v* release tag} of a local clone ({} when it has none or cannot say): a history
    step between two of them is a step of the release ladder (``results.release_step``)."""
    try:
        return {sha: tag for tag, sha in release_ladder(repo) if is_release_tag(tag)}
    except RunError:
        return {}


def snapshot(results_dir, machine_name):
    """{results file: modification time} of one machine: what a run changes, it measured."""
    return {p: p.stat().st_mtime_ns for p in result_files(Path(results_dir) / machine_name)}


def neighbours(results_dir, machine_name):
    """[(bindings, previous measured commit, next measured commit, previous's results file, next's)] in commit
    order and per environment; ``bindings``: the environment's ``CUDA_BENCH_BINDINGS`` (the paired engine builds
    both sides of a step with one)."""
    by_env = {}
    for path in result_files(Path(results_dir) / machine_name):
        data = results.load(path)
        if data is not None:
            bindings = (data.get("env_vars") or {}).get("CUDA_BENCH_BINDINGS")
            by_env.setdefault((data.get("env_name"), bindings), []).append(
                (data.get("date") or 0, data["commit_hash"], path))
    found = []
    for (_, bindings), runs in by_env.items():
        runs.sort()
        found += [(bindings, previous, commit, before_path, path)
                  for (_, previous, before_path), (_, commit, path) in zip(runs, runs[1:]) if previous != commit]
    return found


def new_steps(results_dir, machine_name, before):
    """(previous measured commit, next measured commit) pairs, in commit order and per environment, for the
    results files that changed since ``before`` (a :func:`snapshot`): each newly measured commit is paired
    with the measured commit just before it, and with the one just after it when it was measured later (an
    older commit filled in), so the steps keep chaining."""
    after = snapshot(results_dir, machine_name)
    changed = {p for p, mtime in after.items() if before.get(p) != mtime}
    return list(dict.fromkeys((previous, commit) for _, previous, commit, before_path, path
                              in neighbours(results_dir, machine_name)
                              if path in changed or before_path in changed))  # once, however many envs


def missing_steps(results_dir, machine_name):
    """{bindings: [(previous, next)]}: the pairs of measured commits that have no paired step yet (a step that
    failed, a run with --no-steps), in commit order, by the cuda-bindings their environments were built with
    (``scripts/bench steps --bindings`` makes one list)."""
    done = {(step["base"], step["head"]) for step in results.steps(results_dir, machine_name)}
    missing = {}
    for bindings, previous, commit, _, _ in neighbours(results_dir, machine_name):
        pairs = missing.setdefault(bindings, [])
        if (previous, commit) not in done and (previous, commit) not in pairs:  # once, however many envs
            pairs.append((previous, commit))
    return missing


def to_recheck(results_dir, machine_name, start):
    """The history's regressions not yet confirmed, which a measurement on this machine start (``start``,
    ``results.start_id`` of ``machine.host()``) confirms or does not reproduce (``stats.repeated_verdict``):
    {(base, head): (bindings, [case])}; and [(base, head, case)] for those flagged on this very start only,
    with a layout per process, which only another start can confirm. (The recheck has a layout per process:
    a flag made with one fixed layout per build is measured again on any start, its own included, where a
    flag clears it or not: ``stats.repeated_verdict``.)"""
    todo, here = {}, []
    for step in results.steps(results_dir, machine_name):
        for case in step["cases"]:
            if case["verdict"] != "regression" or case["confirmed"]:
                continue
            flags = [(m["start_id"], m["layouts"]) for m in case["measurements"] if m["verdict"] == "regression"]
            if {s for s, _ in flags} == {start} and (start, "random") in flags:
                here.append((step["base"], step["head"], case["name"]))
                continue
            todo.setdefault((step["base"], step["head"]), (step_bindings(step), []))[1].append(case["name"])
    return todo, here


def step_bindings(step):
    """The cuda-bindings a history step was measured with, as ``--bindings`` takes it: the record's own
    ``bindings``; for a record older than that field, read off the versions both sides ran with: 'auto' where
    they differ (a step across the CUDA 12/13 boundary), 'source' for a local version (built from the
    commit), else the version."""
    if step.get("bindings"):
        return step["bindings"]
    versions = {(v or {}).get("cuda-bindings", "+unknown") for v in (step.get("versions") or {}).values()} or {"+"}
    if len(versions) > 1:
        return "auto"
    (version,) = versions
    return "source" if "+" in version else version


def newest_measured(results_dir, machine_name, before):
    """The newest commit (by commit date) among the results files that changed since ``before``, or None."""
    after = snapshot(results_dir, machine_name)
    found = [results.load(p) for p, mtime in after.items() if before.get(p) != mtime]
    found = [d for d in found if d is not None]
    return max(found, key=lambda d: d.get("date") or 0)["commit_hash"] if found else None


def no_gpu_results_dir(info, results_dir):
    """Where a run's results go: the history (``results/``) only from a machine with a GPU, unless a
    results directory was named."""
    if results_dir or machine.has_gpu(info):
        return results_dir
    print(f"bench: no GPU here: this run's results go to {NO_GPU_RESULTS}, not into the history "
          "(--results-dir results to force)", file=sys.stderr)
    return str(NO_GPU_RESULTS)
