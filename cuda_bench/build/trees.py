"""Stage 1, build: what a build of a commit is made of (its packages' git trees), read without
building anything.

An environment of a commit installs one wheel per package folder the commit has (:data:`PACKAGES`),
each cached under the git tree hash of its folder, the interpreter and the version scheme
(:func:`cache_key`), and for ``cuda_core`` the cuda-bindings it is compiled against. So
:func:`identity` of two commits says whether their environments install the same wheels
(:func:`differs`: which packages do not), and :func:`cache_keys` which cache entries an
environment takes. Standard library only: this module runs inside the benchmark environments.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

from cuda_bench.build.toolkit import BuildError, git

PACKAGES = ("cuda_pathfinder", "cuda_bindings", "cuda_core")  # build order
DISTRIBUTIONS = {
    "cuda_pathfinder": "cuda-pathfinder",
    "cuda_bindings": "cuda-bindings",
    "cuda_core": "cuda-core",
}
# part of the cache key: bump when scm_version() changes what a wheel is called
VERSION_SCHEME = "v2"


def tree_hash(src, package):
    return git(src, "rev-parse", f"HEAD:{package}")


def python_tag(version=None):
    """The wheel cache's name of an interpreter: this one's, or that of ``version`` ("3.12", as a
    machine's asv results name it) on this platform: 'cp312-linux-x86_64'."""
    found = re.match(r"(\d+)\.(\d+)", str(version or ""))
    major, minor = found.groups() if found else sys.version_info[:2]
    return f"cp{major}{minor}-{sysconfig.get_platform()}"


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


def package_trees(repo, commit):
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
    found = package_trees(repo, commit)
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


def cache_key(package, tree, bindings, python=None):
    """The wheel cache's key of ``package`` built from ``tree``: the tree, the interpreter (this
    one, or the ``python`` version another machine runs), the version scheme; for cuda_core,
    compiled against the bindings, also ``bindings`` (an :func:`identity`'s cuda_bindings part: the
    wheel ``cuda-bindings==X`` or the bindings' tree; "" where the commit has none)."""
    key = f"{tree}-{python_tag(python)}-{VERSION_SCHEME}"
    if package == "cuda_core" and bindings:
        key += "-bindings" + (
            bindings.split("==")[1] if bindings.startswith("cuda-bindings==") else bindings[:12]
        )
    return key


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


def cache_keys(repo, commit, bindings, python=None):
    """[(package, key)]: the wheel cache entries an environment of ``commit`` built with
    ``bindings`` takes (:func:`build_one`'s keys, read from git: :func:`identity`), for this
    interpreter or the ``python`` version another machine runs."""
    ident = identity(repo, commit, bindings)
    return [
        (package, cache_key(package, ident[package], ident.get("cuda_bindings", ""), python))
        for package in PACKAGES
        if package in ident and not ident[package].startswith("cuda-bindings==")
    ]
