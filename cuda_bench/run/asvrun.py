"""Stage 2, run: drive asv. The suite over commits of cuda-python, into the history.

``asv.conf.json`` is the project's configuration; a command's overrides (a local clone, a
cuda-bindings wheel, a system site-packages, another results directory) go into a derived copy,
``.asv/asv.conf.local-PID.json`` for the command's life, never into the file itself. Timed asv
commands run pinned to one core, with address-space randomisation off and a fixed hash seed
(``cuda_bench.foundations.machine``); the build step's progress reaches the console while asv
builds. What each commit was built from goes to ``builds.jsonl``, and what the pages say of it
(title, date, tags) to ``results/commits.json``, so the dashboard publishes from results/ alone.
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

from cuda_bench.build import toolkit, trees
from cuda_bench.foundations import machine, process
from cuda_bench.foundations.names import is_release_tag, release_version
from cuda_bench.foundations.paths import (
    ASV_DRIVEN,
    BUILDS,
    COMMITS,
    CONF,
    LOCAL_SETTINGS,
    ROOT,
    WORK,
    local_conf,
)
from cuda_bench.results import buildtime, records


class RunError(Exception):
    """A problem the user can fix: printed as one line, no traceback."""


def load_conf(path=CONF):
    import json5  # asv's own config reader: the file has comments

    return json5.loads(Path(path).read_text())


def asv_mirror(conf):
    """Where asv keeps its clone of a remote project: ``project``, next to the (derived) config
    file."""
    return WORK / conf["project"]


def is_git_repo(path):
    """Whether ``path`` is a git repository, with a work tree or bare (a shallow clone for a GPU
    box)."""
    return (Path(path) / ".git").exists() or (Path(path) / "HEAD").exists()


def derived_conf(repo=None, bindings=None, results_dir=None, system_site=None, need_repo=True):
    """asv.conf.json with this run's overrides, written to .asv/ with every path made absolute.
    ``need_repo`` False (publish): the clone that ``cuda-bench init`` recorded may be gone, since
    nothing reads it."""
    conf = load_conf()
    where = "--repo" if repo else f"the clone in {LOCAL_SETTINGS}"
    repo = repo or local_settings().get("repo")
    if repo:
        path = Path(repo).expanduser().resolve()
        if is_git_repo(path):
            conf["repo"] = str(path)
        elif need_repo or where == "--repo":
            raise RunError(
                f"{where} {path} is not a git repository"
                + ("" if where == "--repo" else ": `cuda-bench init --repo PATH` names another")
            )
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
    # an absolute one stays as it is
    for key in ("env_dir", "results_dir", "html_dir", "benchmark_dir"):
        conf[key] = str((ROOT / conf[key]).resolve())
    for key in ("build_command", "install_command", "uninstall_command"):
        conf[key] = [cmd.replace("{conf_dir}", str(ROOT)) for cmd in conf.get(key, [])]
    path = local_conf()
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale()
    path.write_text(json.dumps(conf, indent=1))
    TEMPORARY.append(path)
    return path


#: the files a command writes for its own life (derived configs, hash files): removed when it ends
TEMPORARY = []


def remove_stale():
    """Temporary files of commands that were killed outright (SIGKILL): those whose process is
    gone."""
    import re

    for path in list(WORK.glob("asv.conf.local-*.json")) + list(WORK.glob("ladder-*.txt")):
        found = re.search(r"-(\d+)\.\w+$", path.name)
        if found and not os.path.exists(f"/proc/{found.group(1)}"):
            path.unlink(missing_ok=True)


def remove_temporary():
    """Remove this command's temporary files (``cuda_bench.cli`` does when a command ends, however
    it ends; at the latest, at interpreter exit)."""
    while TEMPORARY:
        TEMPORARY.pop().unlink(missing_ok=True)


atexit.register(remove_temporary)


def temporary_file(prefix, text):
    """A file in .asv/ holding ``text`` for the life of this command."""
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / f"{prefix}{os.getpid()}.txt"
    path.write_text(text)
    TEMPORARY.append(path)
    return path


def requirements(conf):
    """What a benchmark environment installs besides cuda-python (asv.conf.json's matrix ``req``,
    without asv's own runner): the paired engine's environments hold the same."""
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
    """A remote repository must answer before asv tries to clone it (asv would print a long
    traceback)."""
    if Path(repo).exists():
        return
    try:
        proc = subprocess.run(
            ["git", "ls-remote", "--heads", repo],
            capture_output=True,
            text=True,
            timeout=30,
            env=dict(os.environ, GIT_TERMINAL_PROMPT="0"),
        )
        reason = (
            proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else ""
        )
        ok = proc.returncode == 0
    except subprocess.TimeoutExpired:
        ok, reason = False, "no answer in 30 s"
    if not ok:
        raise RunError(
            f"cannot reach {repo} ({reason or 'git ls-remote failed'}). Point --repo at a local "
            "clone (scripts/shallow_clone.sh makes a small one), or see docs/guide.md, 'A GPU box "
            "without network'"
        )


def local_repo(conf):
    """A local git repository of the configured project for the paired engine: the configured path,
    or asv's own mirror clone (made or refreshed here when the project is a URL)."""
    repo = conf["repo"]
    if Path(repo).exists():
        return Path(repo)
    mirror = asv_mirror(conf)
    check_reachable(repo)
    if mirror.exists():
        subprocess.run(
            ["git", "-C", str(mirror), "fetch", "-q", "--prune", "origin", "+refs/*:refs/*"],
            check=False,
        )
    else:
        subprocess.run(["git", "clone", "-q", "--mirror", repo, str(mirror)], check=True)
    return mirror


@contextlib.contextmanager
def build_progress():
    """While asv builds, show the build step's progress lines (``CUDA_BENCH_PROGRESS``) on
    stderr."""
    fd, path = tempfile.mkstemp(prefix="build-progress-", dir=WORK if WORK.exists() else None)
    os.close(fd)
    stop = threading.Event()

    def tail():
        with open(path) as f:
            while True:
                line = f.readline()
                if line:  # an empty line only ends the line asv left open
                    print(
                        f"bench: build: {line.rstrip()}" if line.strip() else "",
                        file=sys.stderr,
                        flush=True,
                    )
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
    """Run asv (with ``config``); its exit status. ``timed``: a command that measures: pinned to
    ``affinity``, ASLR off, fixed hash seed. asv runs in a session of its own: an interrupt of this
    command (Ctrl-C, SIGTERM) reaches it as Ctrl-C, on which asv stops the build or benchmark it
    runs (each in its own process group) and exits, saying nothing (``paths.ASV_DRIVEN``: the
    command says it, in one line); what is still running 30 s later is killed."""
    cmd = [sys.executable, "-m", "asv", *args, "--config", str(config)]
    full_env = dict(os.environ)
    if timed:
        cmd = [*machine.no_aslr_prefix(), *cmd[:4], *machine.cpu_affinity(affinity), *cmd[4:]]
        full_env = machine.timed_env(full_env)
    full_env.update(env or {}, **{ASV_DRIVEN: "1"})
    print("bench: $ " + " ".join(cmd), file=sys.stderr, flush=True)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, start_new_session=True)
    try:
        return proc.wait()
    except BaseException:
        stop_group(proc)
        raise


def stop_group(proc, grace=30):
    """Ctrl-C to ``proc``'s process group, then SIGKILL to what is left of it after ``grace``
    seconds."""
    import signal

    for signum, wait in ((signal.SIGINT, grace), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, signum)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except (subprocess.TimeoutExpired, KeyboardInterrupt):  # a second Ctrl-C: no more grace
            continue


def record_builds(machine_name, conf_path, results_dir=None):
    """Keep what each commit was built from (package versions, bindings, build times) next to the
    results: ``results/<machine>/builds.jsonl`` (``results_dir``, where asv wrote them, else the
    config's), one record per commit and environment."""
    conf = json.loads(Path(conf_path).read_text())
    env_dir, folder = Path(conf["env_dir"]), Path(results_dir or conf["results_dir"]) / machine_name
    rows = []
    for made in env_dir.glob("*/asv-build-cache/*/wheels/build.json"):
        env_path = made.parents[3]
        try:
            row = json.loads(made.read_text())
            installed = made.with_name("installed.json")
            row["installed"] = json.loads(installed.read_text()) if installed.exists() else None
            info = env_path / "asv-env-info.json"
            info = json.loads(info.read_text()) if info.exists() else {}
            row.update(
                python=info.get("python"), env_vars=info.get("build_env_vars"), env=env_path.name
            )
        except (OSError, ValueError) as exc:
            print(
                f"bench: {made.parent}: {exc}; that build is not recorded in {BUILDS}",
                file=sys.stderr,
            )
            continue
        rows.append(row)
    keep_builds(folder, rows)


def stopped_builds(env_dir, since, limit):
    """One line for each build asv's build step started at or after ``since`` (epoch seconds) and
    did not finish (``wheels.build``'s record in asv's build cache): a build that said nothing for
    ``limit`` seconds (asv's ``install_timeout``) timed out, and the line says what to do; another
    says why it stopped."""
    said = []
    for made in sorted(Path(env_dir).glob("*/asv-build-cache/*/wheels/build.json")):
        try:
            if made.stat().st_mtime < since:
                continue
            row = json.loads(made.read_text())
        except (OSError, ValueError):
            continue
        if row.get("ok") is not False or "error" not in row:
            continue
        sha = str(row.get("commit", "?"))[:9]
        if row.get("silent_seconds", 0) >= limit - 1:
            said.append(
                f"the build of {sha} timed out after {row.get('seconds', 0):.0f} s: asv stops a "
                f"build that says nothing for install_timeout ({limit:.0f} s); build it outside "
                f"asv's limit first (cuda-bench prebuild {sha}), then run again "
                "(docs/guide.md#prebuild)"
            )
        else:
            said.append(f"the build of {sha} failed: {str(row['error']).splitlines()[0]}")
    return said


def keep_builds(folder, rows):
    """Put ``rows`` (build records) into ``folder``'s ``builds.jsonl``: one record per commit and
    environment, a newer one replacing the line of the one before; the lines of other records, and
    lines that are no record, stay as they were. Each package tree they compiled goes into
    ``compiles.jsonl`` too (``buildtime.keep``), where a rebuild does not replace it."""
    path = Path(folder) / BUILDS
    # split as records.lines splits, so that a line number names the same line
    lines = (
        [line.decode("utf-8", "replace") for line in path.read_bytes().splitlines()]
        if path.exists()
        else []
    )
    # (commit, env) -> the line of its record; a line that is no record of this schema stays as
    # it is
    at = {}
    for number, found in records.lines(path):
        if (
            isinstance(found, dict)
            and found.get("schema") == records.SCHEMA
            and "commit" in found
            and "env" in found
        ):
            at[(found["commit"], found["env"])] = number - 1
    changed = False
    for row in rows:
        try:
            line = json.dumps(records.check(records.stamped(row, "build"), "build"), sort_keys=True)
        except ValueError as exc:
            print(
                f"bench: the build of {row.get('commit')}: {exc}; not recorded in {BUILDS}",
                file=sys.stderr,
            )
            continue
        key = (row["commit"], row["env"])
        if key in at:
            changed = changed or lines[at[key]] != line
            lines[at[key]] = line
        else:
            at[key] = len(lines)
            lines.append(line)
            changed = True
    if changed:
        Path(folder).mkdir(parents=True, exist_ok=True)
        # whole or not at all
        process.write_whole(path, "".join(line + "\n" for line in lines if line.strip()))
    keep_compiles(folder, rows)


def keep_compiles(folder, rows):
    """Put each package tree ``rows`` (build records) compiled into ``folder``'s
    ``compiles.jsonl`` (``buildtime.keep``), or say why not."""
    try:
        buildtime.keep(folder, rows)
    except (OSError, records.RecordError) as exc:
        said = f"bench: build times not recorded in {records.FILES['compile']}: {exc}"
        print(said, file=sys.stderr)


def release_ladder(repo, branch="main"):
    """The commits of every cuda-core release tag (no release candidates), oldest first, then the
    branch head: what ``asv run HASHFILE:`` should run to show latency across releases."""
    proc = subprocess.run(
        ["git", "ls-remote", str(repo), "refs/tags/cuda-core-v*", f"refs/heads/{branch}"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RunError(f"cannot list the tags of {repo}: {proc.stderr.strip()[-300:]}")
    tags, head = {}, None
    for line in proc.stdout.splitlines():
        sha, ref = line.split("\t")
        if ref == f"refs/heads/{branch}":
            head = sha
            continue
        tag = ref[len("refs/tags/") :].removesuffix("^{}")
        if is_release_tag(tag):
            # an annotated tag is listed twice; its peeled ("^{}") line names the commit
            if ref.endswith("^{}") or tag not in tags:
                tags[tag] = sha
    ordered = sorted(tags, key=release_version)
    commits = [(tag, tags[tag]) for tag in ordered]
    if head and head not in {sha for _, sha in commits}:
        commits.append((branch, head))
    return commits


def release_tags(repo):
    """{commit: its cuda-core-v* release tag} of a local clone ({} when it has none or cannot say):
    a history step between two of them is a step of the release ladder
    (``history.release_step``)."""
    try:
        return {sha: tag for tag, sha in release_ladder(repo) if is_release_tag(tag)}
    except RunError:
        return {}


# --- this checkout's settings (cuda-bench init) ---------------------------------------------------
def local_settings(path=LOCAL_SETTINGS):
    """``.asv/local.json`` as a dict: ``repo`` (a local clone of cuda-python), ``machine`` (asv's
    machine name); {} before ``cuda-bench init`` wrote it. Every asv command reads it through the
    project's asv plugin."""
    try:
        found = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise RunError(f"{path} does not parse ({exc}): run `cuda-bench init` again") from None
    return found if isinstance(found, dict) else {}


def write_local_settings(settings, path=LOCAL_SETTINGS):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    process.write_whole(path, json.dumps(settings, indent=1, sort_keys=True) + "\n")


# --- revisions, checked before anything is built --------------------------------------------------
def range_of(asv_args):
    """The revision range among ``asv run``'s arguments (its one positional argument), or None."""
    import argparse

    from asv.commands.run import Run

    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    sub = parser.add_subparsers(dest="command")
    Run.setup_arguments(sub)
    try:
        args, _ = sub.choices["run"].parse_known_args(list(asv_args))
    except (argparse.ArgumentError, SystemExit):
        return None
    return args.range


def check_revisions(repo, spec):
    """The commits ``spec`` names in ``repo``, as ``asv run`` resolves them (``git rev-list
    --first-parent``; ``HASHFILE:path``: each line of the file; none: main's head), or RunError
    saying which name is not there. asv's own words for sets of commits (NEW, ALL, EXISTING, TAGS)
    pass unchecked."""
    import shlex

    if spec in ("NEW", "ALL", "EXISTING", "TAGS"):
        return None
    if spec is None:  # asv runs the head of the configured branch
        spec = "main^!"
    if spec.startswith("HASHFILE:"):
        names = [
            line.strip()
            for line in Path(spec[len("HASHFILE:") :]).read_text().splitlines()
            if line.strip()
        ]
        return [resolve_one(repo, name) for name in names]
    proc = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--first-parent", *shlex.split(spec), "--"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        said = (proc.stderr.strip().splitlines() or ["no commit"])[0].removeprefix("fatal: ")
        raise RunError(
            f"{spec!r} names no commit of {repo} ({said}); a branch, tag, SHA or range such as "
            "HEAD~20..HEAD or SHA^!"
        )
    return proc.stdout.split()


def first_parent(repo, branch="main"):
    """``branch``'s first-parent commits in ``repo``, oldest first."""
    return subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--first-parent", "--reverse", branch, "--"],
        capture_output=True,
        text=True,
    ).stdout.split()


def resolve_one(repo, name):
    try:
        return trees.resolve(repo, name)
    except toolkit.BuildError as exc:
        raise RunError(str(exc)) from None


# --- what the pages say of a commit ---------------------------------------------------------------
def describe_commits(repo, commits, branch="main"):
    """{commit: {"title", "date" (ms, as asv dates a commit), "tags" (cuda-core release tags),
    "position" (its place in ``branch``'s first-parent history, oldest 1, or None for a commit off
    it)}}: what the dashboard shows of a measured commit, from results/ alone. In a shallow clone
    the places count from its oldest commit: :func:`record_commits` puts them on the same scale as
    the ones recorded before."""
    tags = {}
    for tag, sha in release_ladder(repo, branch):
        if is_release_tag(tag):
            tags.setdefault(sha, []).append(tag)
    line = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--first-parent", "--reverse", branch, "--"],
        capture_output=True,
        text=True,
    ).stdout.split()
    # main's own commits, oldest 1: not those merged into it
    place = {sha: i for i, sha in enumerate(line, 1)}
    out = {}
    for sha in commits:
        proc = subprocess.run(
            ["git", "-C", str(repo), "show", "-s", "--format=%H%x00%ct%x00%s", sha],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            continue
        full, date, title = proc.stdout.strip().split("\0", 2)
        out[full] = {
            "title": title,
            "date": int(date) * 1000,
            "tags": tags.get(full, []),
            "position": place.get(full),
        }
    return out, place


def record_commits(repo, commits, path=COMMITS, branch="main"):
    """Add what the pages say of ``commits`` to ``results/commits.json`` (:func:`describe_commits`).
    Places on main counted in a shallow clone are moved onto the recorded scale by a commit both
    know; with none in common, a shallow clone's places are left out (None) rather than mixed with
    the recorded ones, and a commit the file placed already keeps its place."""
    path = Path(path)
    known = json.loads(path.read_text()) if path.exists() else {}
    found, place = describe_commits(repo, commits, branch)
    shallow = (
        subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--is-shallow-repository"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        == "true"
    )
    if shallow:
        anchors = [
            known[sha]["position"] - i
            for sha, i in place.items()
            if known.get(sha, {}).get("position") is not None
        ]
        offset = anchors[0] if anchors and len(set(anchors)) == 1 else None
        for sha, entry in found.items():
            if entry["position"] is not None:
                entry["position"] = None if offset is None else entry["position"] + offset
            elif known.get(sha, {}).get("position") is not None:
                # a place a fuller clone counted stays where this one counts none
                entry["position"] = known[sha]["position"]
    known.update(found)
    path.parent.mkdir(parents=True, exist_ok=True)
    process.write_whole(path, json.dumps(dict(sorted(known.items())), indent=1) + "\n")
    return known
