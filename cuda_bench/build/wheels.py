"""Stage 1, build: cuda-python's packages built into wheels, cached by what they are built from.

:func:`build` builds, in order, whichever of ``cuda_pathfinder/``, ``cuda_bindings/`` and
``cuda_core/`` a checkout has, each against the ones before it (``--no-build-isolation``, so
``cuda_core`` compiles against the bindings of the same commit, not PyPI's newest), or takes a
cuda-bindings wheel instead (``CUDA_BENCH_BINDINGS``). Wheels are cached by the git tree hash of the
package's folder (:func:`cache_key`), so a commit that only touches ``cuda_core/`` rebuilds only
``cuda_core``; :func:`identity` reads from git, without building, what an environment of a commit is
made of, and :func:`differs` which packages two of them build differently. Standard library only:
this module runs inside the benchmark environments.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import json
import os
import re
import resource
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from cuda_bench.build.toolkit import (
    LAST_OUTPUT,
    BuildError,
    cache_root,
    cuda_home,
    git,
    log,
    pip,
    progress,
    run,
    wanted_cuda,
)
from cuda_bench.build.trees import DISTRIBUTIONS, PACKAGES, auto_bindings, cache_key, tree_hash
from cuda_bench.foundations import process

# cuda-bindings' wheels load NVRTC at run time but do not bring it (only their heavy [all] extra
# does)
NVRTC = {"12": "nvidia-cuda-nvrtc-cu12==12.*", "13": "cuda-toolkit[nvrtc]==13.*"}
# The oldest cuda-pathfinder that cuda-bindings wheels load the driver with: under cuda-bindings
# 12.9.10, cuda-core 0.3.2's own 1.1.0 fails (KeyError 'cuda') and 0.4.0's 1.3.1a0 works (H200,
# 2026-12-03).
WHEEL_PATHFINDER = (1, 3)
#: beside the wheel in a cache entry: what compiled it (``built_with``)
BUILT_WITH = "built-with.json"
BUILD_REQUIREMENTS = [
    "setuptools>=77",
    "setuptools-scm>=8",
    "Cython>=3.0,<3.3",
    "wheel",
    "pyclibrary",
]


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


def ensure_build_requirements():
    pip("install", *BUILD_REQUIREMENTS)


COLD = {
    "cuda_core": "; a cold cuda_core build takes minutes",
    "cuda_bindings": "; cuda_bindings from source takes a quarter hour",
}


def build_one(src, package, out, bindings_spec, record):
    if bindings_spec != "source":
        bindings = f"cuda-bindings=={bindings_spec}"
    else:
        bindings = tree_hash(src, "cuda_bindings") if (src / "cuda_bindings").is_dir() else ""
    key = cache_key(package, tree_hash(src, package), bindings)
    cached = cache_root() / package / key
    start = time.monotonic()
    with one_build_of(cached, package) as waited:
        wheels = sorted(cached.glob("*.whl")) if cached.is_dir() else []
        if wheels:
            action = "reused, built beside this one" if waited else "reused"
        else:
            compiled = build_into(src, package, key, cached, bindings_spec)
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
        "built_with": built_with(cached),
    }
    if action == "built":
        record["packages"][package]["compile"] = compiled


def built_with(cached):
    """The versions that compiled the wheel of the cache entry ``cached`` (:func:`build_versions`:
    the compiler's, Cython's, ...), None for an entry made before they were kept with it. Two
    builds of one tree by two compilers run different machine code: instruction counts, and
    timings, of compiled code differ with the compiler."""
    try:
        return json.loads((Path(cached) / BUILT_WITH).read_text())
    except (OSError, ValueError):
        return None


#: what of :func:`built_with` two builds must share to run the same machine code
COMPILED_BY = ("compiler", "cython")


def compiled_by(record):
    """{package: :func:`built_with`} of an environment's build ``record``: the packages whose
    wheels say what compiled them."""
    return {
        package: entry["built_with"]
        for package, entry in (record.get("packages") or {}).items()
        if entry.get("built_with")
    }


def compiler_of(versions):
    """What of ``versions`` (:func:`built_with`) decides the machine code: :data:`COMPILED_BY`."""
    return {key: versions.get(key) for key in COMPILED_BY}


def compiler_change(compiled):
    """The packages compiled by another compiler or Cython on the two sides of ``compiled``
    ({"base": :func:`compiled_by`, "head": ...}: a step record's), in words: "cuda_core compiled
    by gcc 12 with Cython 3.2.9 at the base and gcc 13 with Cython 3.2.9 at the head"; "" where
    none differs or a side does not say."""
    base, head = ((compiled or {}).get(side) or {} for side in ("base", "head"))

    def said(versions):
        return f"{versions.get('compiler')} with Cython {versions.get('cython')}"

    return "; ".join(
        f"{package} compiled by {said(base[package])} at the base and {said(head[package])} at "
        "the head"
        for package in sorted(set(base) & set(head))
        if compiler_of(base[package]) != compiler_of(head[package])
    )


@contextlib.contextmanager
def one_build_of(cached, package):
    """Held while a cache entry is looked up and, where missing, built: builds of one tree at once
    (prebuild's commits that share a ``cuda_bindings`` tree, two asv runs) make it once; the others
    wait for that build and take its wheel from the cache. Yields whether it waited. The lock is the
    kernel's (``flock``), so a build that dies lets go of it."""
    locks = cache_root() / ".locks"  # beside the packages' folders, which hold cache entries alone
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{package}-{cached.name}", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            waited = False
        except BlockingIOError:
            progress(f"{package}: waiting for the build of the same tree beside this one")
            fcntl.flock(lock, fcntl.LOCK_EX)
            waited = True
        yield waited


def compile_record(env, before, began):
    """What one ``pip wheel`` of a package cost (``before``: this process's children's rusage as it
    started, ``began`` its monotonic start): its wall seconds and the CPU seconds (user + system) of
    everything it ran and waited for, the compilers first, which do not depend on how many builds
    ran beside it; the compile jobs, whether ccache compiled (its hits cost next to nothing), the
    Cython, setuptools, compiler and Python versions, and when it was built. This process runs one
    build at a time, so its children's rusage grew by that build's alone."""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_seconds": round(time.monotonic() - began, 1),
        "cpu_seconds": round(cpu, 1),
        "jobs": int(env.get("CUDA_PYTHON_PARALLEL_LEVEL") or 1),
        "ccache": env.get("CC", "").split()[:1] == ["ccache"],
        "versions": build_versions(env),
    }


def build_versions(env):
    """The versions a build's CPU seconds depend on: Cython's, setuptools', the C compiler's (the
    first line of ``CC --version``: the compiler setuptools runs, through ccache or not) and
    Python's; None for one that is not there."""
    versions = {"python": sys.version.split()[0]}
    for dist in ("Cython", "setuptools"):
        try:
            versions[dist.lower()] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist.lower()] = None
    words = (env.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    compiler = words[1:2] if words[:1] == ["ccache"] else words[:1]
    try:
        said = run([*compiler, "--version"]).splitlines() if compiler else []
    except (BuildError, OSError):
        said = []
    versions["compiler"] = said[0].strip() if said else None
    return versions


def build_into(src, package, key, cached, bindings_spec):
    """Build ``package`` of the checkout ``src`` into the cache entry ``cached`` (named ``key``):
    :func:`compile_record`'s record of it."""
    progress(f"{package}: building ({key[:12]})" + COLD.get(package, ""))
    # one hidden folder beside the cache entry (the same file system) holds the wheel being made
    # and every temporary folder of pip, the build backend and the compilers (their TMPDIR): it
    # goes whatever happens
    cached.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=cached.parent))
    made, scratch = work / "wheel", work / "tmp"
    made.mkdir()
    scratch.mkdir()
    try:
        env = build_env(src, package, bindings_spec) | {"TMPDIR": str(scratch)}
        before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        pip(
            "wheel",
            "--verbose",  # the backend's output as it comes: a compile that goes on says so
            "--no-build-isolation",
            "--no-deps",
            "-w",
            str(made),
            str(src / package),
            env=env,
            own_group=True,
        )  # an interrupt ends pip and all it runs before this folder goes
        compiled = compile_record(env, before, began)
        if not list(made.glob("*.whl")):
            raise BuildError(f"{package}: pip wheel produced no wheel")
        # what compiled it goes with the wheel, to every environment that reuses it (BUILT_WITH)
        (made / BUILT_WITH).write_text(json.dumps(compiled["versions"]) + "\n")
        # published in one rename, under the lock: a reader never sees half an entry
        made.rename(cached)
        return compiled
    finally:
        # built, failed or interrupted (Ctrl-C, SIGTERM): no half-made entry, no temporary
        # folder stays
        process.remove(work)


#: the build in progress: (its record, the file it goes to), for :func:`stopped`
RUNNING = []


def stopped(why):
    """Write the record of the build in progress, with why it stopped, how long it ran and how long
    it had said nothing (asv stops a build step silent for ``install_timeout`` seconds): first, as
    the interrupt comes, for asv kills the step a second after it asks it to stop."""
    for record, path, start in RUNNING:
        record["error"] = f"stopped ({why}) after {time.monotonic() - start:.0f} s"
        record["silent_seconds"] = round(time.monotonic() - LAST_OUTPUT[0], 1)
        record["seconds"] = round(time.monotonic() - start, 1)
        process.write_whole(path, json.dumps(record, indent=1))


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
    RUNNING.append((record, out / "build.json", start))
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
    except KeyboardInterrupt as exc:  # Ctrl-C; SIGTERM (build.py) said why already
        if "error" not in record:
            stopped(str(exc) or "Ctrl-C")
        raise
    finally:
        RUNNING.clear()
        record["seconds"] = round(time.monotonic() - start, 1)
        process.write_whole(out / "build.json", json.dumps(record, indent=1))


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


# What an environment's build installed, {distribution: version}, in its site-packages:
# benchmarks/_compat.py reads it, so a case whose library the environment should hold fails (never
# skips) when that library is missing.
ENV_RECORD = "cuda_bench_env.json"


def install(out, only=None):
    """Install OUT's wheels (``only``: one package's) into this environment. With all of them: check
    that the environment now holds exactly those versions, and write what it holds
    (``installed.json``, and :data:`ENV_RECORD` in site-packages, which the suite checks before it
    times anything)."""
    out = Path(out)
    made_wheels = sorted(out.glob("*.whl"))
    if only:
        prefix = DISTRIBUTIONS[only].replace("-", "_")
        made_wheels = [w for w in made_wheels if w.name.startswith(prefix)]
    if not made_wheels:
        raise BuildError(f"no wheels in {out}: did the build step fail?")
    pip("install", "--no-deps", "--force-reinstall", *map(str, made_wheels))
    if only:
        return
    made = json.loads((out / "build.json").read_text()) if (out / "build.json").is_file() else {}
    # kept outside OUT (tens of MB per build); pip's cache has it
    if made.get("nvrtc") in NVRTC.values():
        pip("install", made["nvrtc"])
    link_system_site()
    wanted = dict(map(wheel_version, made_wheels))
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
