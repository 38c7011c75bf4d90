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
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

from cuda_bench import process
from cuda_bench.paths import CACHE, ROOT

PACKAGES = ("cuda_pathfinder", "cuda_bindings", "cuda_core")  # build order
DISTRIBUTIONS = {
    "cuda_pathfinder": "cuda-pathfinder",
    "cuda_bindings": "cuda-bindings",
    "cuda_core": "cuda-core",
}
# part of the cache key: bump when scm_version() changes what a wheel is called
VERSION_SCHEME = "v2"
# cuda-bindings' wheels load NVRTC at run time but do not bring it (only their heavy [all] extra
# does)
NVRTC = {"12": "nvidia-cuda-nvrtc-cu12==12.*", "13": "cuda-toolkit[nvrtc]==13.*"}
# The oldest cuda-pathfinder that cuda-bindings wheels load the driver with: under cuda-bindings
# 12.9.10, cuda-core 0.3.2's own 1.1.0 fails (KeyError 'cuda') and 0.4.0's 1.3.1a0 works (H200,
# 2026-12-03).
WHEEL_PATHFINDER = (1, 3)
# What an environment's build installed, {distribution: version}, in its site-packages:
# benchmarks/_compat.py reads it, so a case whose library the environment should hold fails (never
# skips) when that library is missing.
ENV_RECORD = "cuda_bench_env.json"
BUILD_REQUIREMENTS = [
    "setuptools>=77",
    "setuptools-scm>=8",
    "Cython>=3.0,<3.3",
    "wheel",
    "pyclibrary",
]


class BuildError(Exception):
    pass


def log(message):
    print(f"[build] {message}", file=sys.stderr, flush=True)


def progress(message):
    """A line worth showing while asv builds (a package starts or ends): logged, and appended to
    ``CUDA_BENCH_PROGRESS`` when set."""
    if message:
        log(message)
    path = os.environ.get("CUDA_BENCH_PROGRESS")
    if path:
        with open(path, "a") as f:
            f.write(message + "\n")


# The build processes this process started for its environments (each a process group of its own:
# the build step and the pip and compilers it runs), which an interrupt stops at once
# (:func:`stop_builds`)
CHILDREN = set()
STOPPING = []
_STARTING = threading.Lock()  # a build starts, or the builds are stopped: never both at once


def stop_builds():
    """Stop every build this process runs (their process groups), and start no more: what
    ``in_builds`` does when it is interrupted, so that Ctrl-C or SIGTERM never waits minutes for a
    compile to end, and each build removes its temporary folders and half-made cache entries first
    (``process.stop_groups``)."""
    with _STARTING:
        STOPPING.append(True)
    process.stop_groups(list(CHILDREN), 2 * process.GRACE + 2)


def in_builds(task, items, workers):
    """``task`` over ``items``, ``workers`` at a time in threads (builds, which run in processes of
    their own); on an interrupt or an error the builds still running are killed before it
    propagates."""
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(workers)
    try:
        futures = [pool.submit(task, item) for item in items]
        # the first failure, not the first item, ends it
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f.exception() for f in done if f.exception() is not None), None)
        if failed is not None:
            raise failed
        return [f.result() for f in futures]
    except BaseException:
        stop_builds()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        STOPPING.clear()


def run(cmd, cwd=None, env=None, own_group=False):
    """``cmd``'s output; BuildError when it fails. ``own_group``: in a process group of its own that
    dies with this process, and which an interrupt here (Ctrl-C, or SIGTERM: :func:`main`) ends
    whole, everything ``cmd`` started with it, before the interrupt goes on (only from the build
    step's main thread)."""
    log("$ " + " ".join(map(str, cmd)))
    if not own_group:
        proc = subprocess.run(
            cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        out, code = proc.stdout, proc.returncode
    else:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            preexec_fn=process.die_with_parent,
        )
        try:
            out, _ = proc.communicate()
        except BaseException:
            process.stop_groups([proc], process.GRACE)
            raise
        code = proc.returncode
    if code != 0:
        tail = "\n".join(out.splitlines()[-40:])
        raise BuildError(f"{' '.join(map(str, cmd[:4]))} ... failed ({code}):\n{tail}")
    return out


def git(src, *args):
    return run(["git", *args], cwd=src).strip()


def tree_hash(src, package):
    return git(src, "rev-parse", f"HEAD:{package}")


def cache_root():
    return Path(os.environ.get("CUDA_BENCH_CACHE", CACHE / "wheels"))


def python_tag():
    return f"cp{sys.version_info[0]}{sys.version_info[1]}-{sysconfig.get_platform()}"


def auto_bindings(src):
    """The cuda-bindings wheel for this commit: CUDA 13's where cuda_core has a cu13 extra, else
    12's."""
    pyproject = Path(src) / "cuda_core" / "pyproject.toml"
    return bindings_for(pyproject.read_text() if pyproject.is_file() else "")


def bindings_for(core_pyproject):
    """``auto``'s cuda-bindings wheel for a cuda_core whose pyproject.toml reads
    ``core_pyproject``."""
    if re.search(r"^cu13\s*=", core_pyproject, re.MULTILINE):
        return os.environ.get("CUDA_BENCH_BINDINGS_13", "13.3.1")
    return os.environ.get("CUDA_BENCH_BINDINGS_12", "12.9.10")


def trees(repo, commit):
    """{package folder: its git tree hash} of the packages ``commit`` of ``repo`` has
    (:data:`PACKAGES`): what the wheel cache keys its builds by."""
    found = {}
    for package in PACKAGES:
        proc = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{commit}:{package}"],
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0:
            found[package] = proc.stdout.strip()
    return found


def identity(repo, commit, bindings):
    """What an environment of ``commit`` built with ``CUDA_BENCH_BINDINGS=bindings`` is made of,
    read from git without building anything: each package folder's tree, and where cuda-bindings is
    a wheel, the wheel (``"cuda-bindings==13.3.1"``) in place of the folder's tree. Two commits of
    one identity install the same wheels (the cache keys of :func:`build_one` are made of nothing
    else), so a step between them has nothing to measure."""
    found = trees(repo, commit)
    spec = bindings
    if spec == "auto":
        proc = subprocess.run(
            ["git", "-C", str(repo), "show", f"{commit}:cuda_core/pyproject.toml"],
            capture_output=True,
            text=True,
        )
        spec = bindings_for(proc.stdout if proc.returncode == 0 else "")
    if spec != "source":
        found["cuda_bindings"] = f"cuda-bindings=={spec}"
    return found


def supports(repo, commit, version):
    """Whether ``commit``'s cuda_core declares an extra for cuda-bindings ``version``'s major
    (``cu12 = ...`` for 12.9.10): a wheel that release can be built and run against."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:cuda_core/pyproject.toml"],
        capture_output=True,
        text=True,
    )
    major = version.split(".")[0]
    return (
        proc.returncode == 0
        and re.search(rf"^cu{major}\s*=", proc.stdout, re.MULTILINE) is not None
    )


def differs(base, head):
    """The packages whose part of two :func:`identity` values differs, in build order."""
    return [p for p in PACKAGES if base.get(p) != head.get(p)]


def wants_cuda_python_metapackage(src):
    """cuda-core 0.1.x declares ``cu12 = ["cuda-python==12.*"]`` (before cuda-bindings was its own
    distribution) and calls ``importlib.metadata.version("cuda-python")`` when it loads a module."""
    pyproject = Path(src) / "cuda_core" / "pyproject.toml"
    text = pyproject.read_text() if pyproject.is_file() else ""
    return re.search(r'"cuda-python\s*[=~<>]', text) is not None


def released_version(src, package):
    """The newest version in the package's release notes (docs/source/release/X.Y.Z-notes.rst)."""
    notes = Path(src) / package / "docs" / "source" / "release"
    found = []
    for path in notes.glob("*-notes.rst"):
        m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)-notes\.rst", path.name)
        if m:
            found.append(tuple(map(int, m.groups())))
    return ".".join(map(str, max(found))) if found else "0.0.0"


def scm_version(src, package):
    """setuptools-scm needs a release tag. Without one (a shallow clone, a fork without tags)
    pretend ``<newest release in the notes>.post1+g<sha>``: after that release for version checks,
    plainly a source build, and, like setuptools-scm's own ``X.Y.Z.devN+g<sha>``, three integers
    before anything else (cuda.core parses the first three parts of cuda-bindings' version as
    ints)."""
    tag_prefix = {
        "cuda_core": "cuda-core-v",
        "cuda_pathfinder": "cuda-pathfinder-v",
        "cuda_bindings": "v",
    }[package]
    try:
        git(src, "describe", "--tags", "--match", f"{tag_prefix}*")
        return None  # setuptools-scm will find it
    except BuildError:
        return f"{released_version(src, package)}.post1+g" + git(
            src, "rev-parse", "--short=9", "HEAD"
        )


def wanted_cuda(src, bindings_spec):
    """The CUDA major.minor whose headers this build needs: the bindings wheel's, or the commit's
    ci/versions.yml ``cuda.build.version`` when the bindings are built from source."""
    if bindings_spec != "source":
        return ".".join(bindings_spec.split(".")[:2])
    versions = Path(src) / "ci" / "versions.yml"
    if versions.is_file():
        m = re.search(r"build:\s*\n\s*version:\s*\"?(\d+\.\d+)", versions.read_text())
        if m:
            return m.group(1)
    return None


def toolkit_version(root):
    """'13.3' from ROOT/include/cuda.h's CUDA_VERSION (13030), or None."""
    try:
        m = re.search(
            r"#define\s+CUDA_VERSION\s+(\d+)", (Path(root) / "include" / "cuda.h").read_text()
        )
    except OSError:
        return None
    return f"{int(m.group(1)) // 1000}.{int(m.group(1)) % 1000 // 10}" if m else None


def cuda_home(src, bindings_spec):
    """CUDA headers for this build. CUDA_BENCH_CUDA_HOME wins outright. Otherwise the first of
    CUDA_HOME, CUDA_PATH, /usr/local/cuda and the cached pip headers that has NVRTC's header and is
    the wanted version; else the headers of that version from PyPI (cached); else, offline, the
    first toolkit found, with a warning (the build may then fail on declarations the bindings
    expect)."""
    forced = os.environ.get("CUDA_BENCH_CUDA_HOME")
    if forced:
        return forced
    want = wanted_cuda(src, bindings_spec)
    pip_root = cache_root().parent / f"cuda-headers-{want}"
    pip_home = pip_root / "nvidia" / f"cu{(want or '0').split('.')[0]}"
    local = [
        Path(p)
        for p in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda")
        if p
    ]
    local = [p for p in local if (p / "include" / "nvrtc.h").is_file()]
    for home in [*local, pip_home]:
        if (home / "include" / "nvrtc.h").is_file() and (
            want is None or toolkit_version(home) == want
        ):
            log(f"CUDA headers: {home} (CUDA {toolkit_version(home)})")
            return str(home)
    if want:
        try:
            # the headers (and libcudart_static.a) of one CUDA release, as NVIDIA publishes them on
            # PyPI
            pip(
                "install",
                "--target",
                str(pip_root),
                f"cuda-toolkit[cudart,crt,profiler,nvrtc,cufile]=={want}.*",
            )
            merge_components(pip_root, pip_home)
            log(f"CUDA headers: {pip_home} (CUDA {want}, from PyPI)")
            return str(pip_home)
        except BuildError as exc:
            reason = str(exc).splitlines()[0]
    else:
        reason = "the commit names no CUDA version"
    if not local:
        raise BuildError(f"no CUDA headers for CUDA {want}: {reason}; set CUDA_BENCH_CUDA_HOME")
    log(
        f"WARNING: no CUDA {want} headers ({reason}); using {local[0]} (CUDA "
        f"{toolkit_version(local[0])})"
    )
    return str(local[0])


def merge_components(pip_root, home):
    """CUDA 13's wheels share one tree (nvidia/cu13); CUDA 12's put each component in its own
    (nvidia/cuda_runtime, nvidia/cuda_nvrtc, ...): gather those into one CUDA_HOME-shaped tree."""
    if (home / "include" / "nvrtc.h").is_file():
        return
    for component in sorted((pip_root / "nvidia").glob("*")):
        for sub in ("include", "lib"):
            if (component / sub).is_dir():
                shutil.copytree(component / sub, home / sub, dirs_exist_ok=True)
    if not (home / "include" / "nvrtc.h").is_file():
        raise BuildError(f"the cuda-toolkit wheels in {pip_root} have no nvrtc.h")


def build_env(src, package, bindings_spec):
    env = dict(os.environ)
    jobs = os.environ.get("CUDA_BENCH_JOBS") or str(os.cpu_count() or 1)
    env["CUDA_HOME"] = env["CUDA_PATH"] = cuda_home(src, bindings_spec)
    env["CUDA_PYTHON_PARALLEL_LEVEL"] = jobs
    # setuptools' build_ext compiles serially unless told; cuda_bindings has dozens of extensions
    cfg = cache_root() / f"build_ext-parallel-{jobs}.cfg"  # one per value, shared by every build
    if not cfg.exists():
        cfg.parent.mkdir(parents=True, exist_ok=True)
        # builds at once (prebuild) never read half
        process.write_whole(cfg, f"[build_ext]\nparallel = {jobs}\n")
    env["DIST_EXTRA_CONFIG"] = str(cfg)
    if shutil.which("ccache"):
        env.setdefault("CC", "ccache gcc")
        env.setdefault("CXX", "ccache g++")
        # every build has a checkout of its own: paths below the checkout's folder are hashed as
        # relative ones, so that a commit that changes one file recompiles only what that file
        # changes, whichever checkout compiled the rest
        env.setdefault("CCACHE_BASEDIR", str(Path(src).resolve().parent))
        env.setdefault("CCACHE_NOHASHDIR", "1")
    version = scm_version(src, package)
    if version:
        env[
            f"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_{DISTRIBUTIONS[package].upper().replace('-', '_')}"
        ] = version
    return env


def pip(*args, env=None, own_group=False):
    return run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        env=env,
        own_group=own_group,
    )


def ensure_build_requirements():
    pip("install", *BUILD_REQUIREMENTS)


COLD = {
    "cuda_core": "; a cold cuda_core build takes minutes",
    "cuda_bindings": "; cuda_bindings from source takes a quarter hour",
}


def cache_key(package, tree, bindings):
    """The wheel cache's key of ``package`` built from ``tree``: the tree, the interpreter, the
    version scheme; for cuda_core, compiled against the bindings, also ``bindings`` (an
    :func:`identity`'s cuda_bindings part: the wheel ``cuda-bindings==X`` or the bindings' tree; ""
    where the commit has none)."""
    key = f"{tree}-{python_tag()}-{VERSION_SCHEME}"
    if package == "cuda_core" and bindings:
        key += "-bindings" + (
            bindings.split("==")[1] if bindings.startswith("cuda-bindings==") else bindings[:12]
        )
    return key


def build_one(src, package, out, bindings_spec, record):
    if bindings_spec != "source":
        bindings = f"cuda-bindings=={bindings_spec}"
    else:
        bindings = tree_hash(src, "cuda_bindings") if (src / "cuda_bindings").is_dir() else ""
    key = cache_key(package, tree_hash(src, package), bindings)
    cached = cache_root() / package / key
    start = time.monotonic()
    wheels = sorted(cached.glob("*.whl")) if cached.is_dir() else []
    if wheels:
        action = "reused"
    else:
        progress(f"{package}: building ({key[:12]})" + COLD.get(package, ""))
        cached.parent.mkdir(parents=True, exist_ok=True)
        # one hidden folder beside the cache entry (the same file system) holds the wheel being made
        # and every temporary folder of pip, the build backend and the compilers (their TMPDIR): it
        # goes whatever happens
        work = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=cached.parent))
        made, scratch = work / "wheel", work / "tmp"
        made.mkdir()
        scratch.mkdir()
        try:
            env = build_env(src, package, bindings_spec) | {"TMPDIR": str(scratch)}
            pip(
                "wheel",
                "--no-build-isolation",
                "--no-deps",
                "-w",
                str(made),
                str(src / package),
                env=env,
                own_group=True,
            )  # an interrupt ends pip and all it runs before this folder goes
            if not list(made.glob("*.whl")):
                raise BuildError(f"{package}: pip wheel produced no wheel")
            # publish the entry in one rename: a concurrent build of the same tree (prebuild, two
            # asv runs) must not leave two wheels under one key; the first one in wins, the other is
            # dropped
            try:
                made.rename(cached)
            except OSError:
                pass
        finally:
            # built, failed or interrupted (Ctrl-C, SIGTERM): no half-made entry, no temporary
            # folder stays
            process.remove(work)
        wheels = sorted(cached.glob("*.whl"))
        action = "built"
    for wheel in wheels:
        shutil.copy2(wheel, out / wheel.name)
    seconds = round(time.monotonic() - start, 1)
    progress(
        f"{package}: {action} in {seconds} s" + (" (wheel cache)" if action == "reused" else "")
    )
    record["packages"][package] = {
        "action": action,
        "seconds": seconds,
        "key": key,
        "wheels": [w.name for w in wheels],
    }


def build(src, out):
    src, out = Path(src).resolve(), Path(out).resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    requested = os.environ.get("CUDA_BENCH_BINDINGS", "source")
    bindings_spec = auto_bindings(src) if requested == "auto" else requested
    record = {
        "commit": git(src, "rev-parse", "HEAD"),
        "bindings": bindings_spec,
        "bindings_requested": requested,
        "packages": {},
        "ok": False,
    }
    start = time.monotonic()
    try:
        present = [p for p in PACKAGES if (src / p).is_dir()]
        if "cuda_core" not in present:
            raise BuildError(f"{src} has no cuda_core/ (is it a cuda-python checkout?)")
        # ends asv's "Building <commit> for <env>" line, which waits unterminated for this step
        progress("")
        ensure_build_requirements()
        for package in PACKAGES:
            if package == "cuda_bindings" and bindings_spec != "source":
                # after the commit's own cuda_pathfinder, so the wheel's dependency on it is met by
                # that one
                pip("install", f"cuda-bindings=={bindings_spec}")
                if version_tuple(installed_version("cuda-pathfinder")) < WHEEL_PATHFINDER:
                    # too old for the wheels' loader calls: the newest one the wheel accepts
                    pip(
                        "install", "--upgrade", "cuda-pathfinder", f"cuda-bindings=={bindings_spec}"
                    )
                record["packages"][package] = {"action": f"wheel cuda-bindings=={bindings_spec}"}
                wanted = [f"cuda-bindings=={bindings_spec}"]
                if wants_cuda_python_metapackage(src):
                    # cuda-core 0.1 depended on `cuda-python` and reads that distribution's version
                    pip("install", f"cuda-python=={bindings_spec}")
                    record["packages"][package]["action"] += f" + cuda-python=={bindings_spec}"
                    wanted.append(f"cuda-python=={bindings_spec}")
                kept = keep_pathfinder_the_wheel_needs(out, bindings_spec, record)
                if not kept and not record["packages"].get("cuda_pathfinder", {}).get("wheels"):
                    # no cuda_pathfinder of the commit's own (before it had one): the one pip
                    # installed for the wheel
                    have = installed_version("cuda-pathfinder")
                    kept = [f"cuda-pathfinder=={have}"] if have else []
                wanted += kept
                # every wheel the environment holds goes into OUT: asv reinstalls a cached build
                # from OUT alone
                record["packages"][package]["wheels"] = download(out, wanted)
                continue
            if package not in present:
                continue
            build_one(src, package, out, bindings_spec, record)
            if package != "cuda_core":  # the next package compiles against this one
                install(out, only=package)
        install_nvrtc(src, bindings_spec, record)
        record["ok"] = True
    except BuildError as exc:
        record["error"] = str(exc)
        raise
    finally:
        record["seconds"] = round(time.monotonic() - start, 1)
        (out / "build.json").write_text(json.dumps(record, indent=1))


def install_nvrtc(src, bindings_spec, record):
    """NVRTC for the bindings' CUDA major, so that compilation (Program, nvrtc*) runs, with or
    without a GPU. Where the index (an offline wheel folder) has no such wheel, the environment
    keeps what its system site provides; the build record says which."""
    major = (
        bindings_spec if bindings_spec != "source" else wanted_cuda(src, "source") or ""
    ).split(".")[0]
    spec = NVRTC.get(major)
    if spec is None:
        record["nvrtc"] = f"no NVRTC wheel known for CUDA {major or '?'}"
        return
    try:
        pip("install", spec)
        record["nvrtc"] = spec
    except BuildError as exc:
        record["nvrtc"] = f"{spec} not installed: {str(exc).splitlines()[-1][:200]}"
        log(
            f"WARNING: {record['nvrtc']}; NVRTC benchmarks run only if the system site provides "
            "NVRTC"
        )


def version_tuple(version):
    """'1.3.1a0' -> (1, 3, 1); None -> ()."""
    return tuple(
        int(part) for part in re.findall(r"\d+", (version or "").split("+")[0].split("a")[0])[:3]
    )


def installed_version(distribution):
    query = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    try:
        return run([sys.executable, "-c", query]).strip()
    except BuildError:
        return None


def keep_pathfinder_the_wheel_needs(out, bindings_spec, record):
    """A release's own cuda_pathfinder can be older than a later cuda-bindings wheel requires or
    calls (cuda-core 0.3.2 ships pathfinder 1.1; cuda-bindings 13.3.1 needs >= 1.4.2, and 12.9.10
    accepts 1.1 but cannot load the driver with it): pip then installed a newer one. Keep that one
    and drop the commit's wheel, so that install does not put it back. Recorded, so builds.jsonl
    says which pathfinder was measured."""
    built = record["packages"].get("cuda_pathfinder")
    if not built or not built.get("wheels"):
        return []
    have = installed_version("cuda-pathfinder")
    ours = built["wheels"][0].split("-")[1]
    if have and have != ours:
        for wheel in built["wheels"]:
            (Path(out) / wheel).unlink(missing_ok=True)
        built["action"] += f"; replaced by cuda-pathfinder {have} for cuda-bindings {bindings_spec}"
        built["wheels"] = []
        log(f"cuda_pathfinder: {ours} is too old for cuda-bindings {bindings_spec}; keeping {have}")
        return [f"cuda-pathfinder=={have}"]
    return []


def download(out, requirements):
    """The wheels of ``requirements`` (exact pins of what the build installed from an index) into
    ``out``, beside the built ones, so that ``install`` can put the whole environment back from
    ``out`` alone (asv reinstalls a cached build that way, after its uninstall command removed every
    cuda-python package). Their names."""
    before = {p.name for p in Path(out).glob("*.whl")}
    pip("download", "--no-deps", "--only-binary=:all:", "-d", str(out), *requirements)
    return sorted({p.name for p in Path(out).glob("*.whl")} - before)


def wheel_version(wheel):
    """(distribution, version) of a wheel file name: ``cuda_bindings-13.3.1-cp312-...whl`` ->
    ('cuda-bindings', '13.3.1')."""
    name, version = Path(wheel).name.split("-")[:2]
    return name.replace("_", "-").lower(), version


def install(out, only=None):
    """Install OUT's wheels (``only``: one package's) into this environment. With all of them: check
    that the environment now holds exactly those versions, and write what it holds
    (``installed.json``, and :data:`ENV_RECORD` in site-packages, which the suite checks before it
    times anything)."""
    out = Path(out)
    wheels = sorted(out.glob("*.whl"))
    if only:
        prefix = DISTRIBUTIONS[only].replace("-", "_")
        wheels = [w for w in wheels if w.name.startswith(prefix)]
    if not wheels:
        raise BuildError(f"no wheels in {out}: did the build step fail?")
    pip("install", "--no-deps", "--force-reinstall", *map(str, wheels))
    if only:
        return
    made = json.loads((out / "build.json").read_text()) if (out / "build.json").is_file() else {}
    # kept outside OUT (tens of MB per build); pip's cache has it
    if made.get("nvrtc") in NVRTC.values():
        pip("install", made["nvrtc"])
    link_system_site()
    wanted = dict(map(wheel_version, wheels))
    # the build took this wheel: it must be here, whatever OUT holds
    if made.get("bindings") not in (None, "source"):
        wanted.setdefault("cuda-bindings", made["bindings"])
    installed = record_installed(out, wanted)
    wrong = {
        dist: installed.get(dist)
        for dist, version in wanted.items()
        if installed.get(dist) != version
    }
    if wrong:
        raise BuildError(
            "the environment does not hold what its build made: "
            + ", ".join(
                f"{dist} {wanted[dist]} wanted, {have or 'none'} installed"
                for dist, have in wrong.items()
            )
        )
    site = Path(sysconfig.get_paths()["purelib"])
    (site / ENV_RECORD).write_text(json.dumps(wanted, indent=1, sort_keys=True) + "\n")


def record_installed(out, wanted=()):
    """What the benchmarks will import, as the environment sees it after install
    (OUT/installed.json): the cuda-python packages, CuPy, numpy and the distributions ``wanted``
    names."""
    names = [
        "cuda-core",
        "cuda-bindings",
        "cuda-pathfinder",
        "cupy-cuda13x",
        "cupy-cuda12x",
        "numpy",
        *(name for name in wanted if name not in ("python",)),
    ]
    query = (
        "import importlib.metadata as m, json, sys\n"
        f"names = {list(dict.fromkeys(names))!r}\n"
        "found = {}\n"
        "for n in names:\n"
        "    try: found[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: pass\n"
        "found['python'] = sys.version.split()[0]\n"
        "print(json.dumps(found))\n"
    )
    versions = json.loads(run([sys.executable, "-c", query]))
    (Path(out) / "installed.json").write_text(json.dumps(versions, indent=1))
    log("installed: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    return versions


def link_system_site():
    """CUDA_BENCH_SYSTEM_SITE: let this environment import CuPy/numpy from another site-packages,
    after its own."""
    site = os.environ.get("CUDA_BENCH_SYSTEM_SITE")
    if site:
        pth = Path(sysconfig.get_paths()["purelib"]) / "cuda_bench_system_site.pth"
        pth.write_text(site + "\n")
        log(f"{pth} -> {site}")


def resolve(repo, rev):
    """The commit ``rev`` names in ``repo``, as asv would find it: a SHA, tag or branch, also a
    branch that exists only as a remote-tracking one (``origin/main`` in a plain clone)."""
    for candidate in (rev, f"origin/{rev}", f"refs/remotes/origin/{rev}"):
        proc = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"],
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0:
            return proc.stdout.strip()
    raise BuildError(f"{repo} has no commit, tag or branch named {rev!r}")


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
    sha = resolve(repo, rev)
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
                with _STARTING:  # stop_builds either sees this build or stops it from starting
                    if STOPPING:
                        raise BuildError(f"{rev} ({sha[:9]}): stopped")
                    proc = subprocess.Popen(
                        [str(python), "-m", "cuda_bench.build", *step],
                        stdout=log_file,
                        stderr=subprocess.STDOUT,
                        env=env,
                        start_new_session=True,
                    )
                    CHILDREN.add(proc)
                try:
                    proc.wait()
                finally:
                    CHILDREN.discard(proc)
                if proc.returncode != 0:
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


def prebuild(repo, revs, parallel, log_dir, bindings):
    """Build ``revs`` of ``repo`` into the cache, ``parallel`` at a time, with ``bindings`` (a
    ``CUDA_BENCH_BINDINGS`` value); returns the records, in order."""

    work = Path(tempfile.mkdtemp(prefix="cuda-bench-prebuild-"))
    log_dir = Path(log_dir or work)
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

    progress(
        f"prebuild: {len(revs)} commits, {parallel} at a time, {jobs} compile jobs each, "
        f"cuda-bindings {bindings}; logs in {log_dir}"
    )
    try:
        return in_builds(lambda item: one(*item), list(enumerate(revs)), parallel)
    finally:  # also on an interrupt: the checkouts and venvs of the builds go
        shutil.rmtree(work, ignore_errors=True)


def cache_keys(repo, commit, bindings):
    """[(package, key)]: the wheel cache entries an environment of ``commit`` built with
    ``bindings`` takes (:func:`build_one`'s keys, read from git: :func:`identity`)."""
    ident = identity(repo, commit, bindings)
    return [
        (package, cache_key(package, ident[package], ident.get("cuda_bindings", "")))
        for package in PACKAGES
        if package in ident and not ident[package].startswith("cuda-bindings==")
    ]


def carry(repo, revs, dest, bindings):
    """Copy the wheel cache entries that environments of ``revs`` take into ``dest`` (laid out as
    the cache), for a machine that is to reuse them (a GPU box without network:
    ``scripts/offline_carry.sh``). Returns (copied, missing) lists of ``package/key``."""
    copied, missing = [], []
    for rev in revs:
        for package, key in cache_keys(repo, resolve(repo, rev), bindings):
            source, target = cache_root() / package / key, Path(dest) / package / key
            if not any(source.glob("*.whl")):
                missing.append(f"{package}/{key}")
            elif not target.exists():
                shutil.copytree(source, target)
                copied.append(f"{package}/{key}")
    return copied, missing


def main(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
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
            build(args.src, args.out)
        else:
            install(args.out)
    except BuildError as exc:
        log(f"FAILED: {exc}")
        return 1
    # Ctrl-C or SIGTERM: what it ran is stopped, its temporary folders removed
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    return 0


def _interrupted(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


if __name__ == "__main__":
    sys.exit(main())
