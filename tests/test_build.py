"""The build stage (cuda_bench.build.environment: asv's build step, prebuild, the paired engine's environments) on real
git repositories with cuda-python's layout.

The repositories hold small stand-ins for cuda_pathfinder/, cuda_bindings/ and cuda_core/: real
setuptools + setuptools-scm packages with the real distribution names and tag patterns, built by pip as
the real ones are, in seconds instead of a quarter hour.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, as_a_terminal_starts_it, ctrl_c_when, git, make_env

from cuda_bench.build import environment as build_module
from cuda_bench.build import toolkit, trees, wheels
from cuda_bench.foundations import process

MODULE = ["-m", "cuda_bench.build"]
TAGS = {"cuda_pathfinder": "cuda-pathfinder-v", "cuda_bindings": "v", "cuda_core": "cuda-core-v"}


def write_package(repo, package, body="VALUE = 1\n", broken=False):
    dist = package.replace("_", "-")
    module = package.split("_", 1)[1]
    root = repo / package
    (root / "cuda" / module).mkdir(parents=True, exist_ok=True)
    (root / "cuda" / module / "__init__.py").write_text(body)
    (root / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=77", "setuptools-scm>=8"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{dist}"
        dynamic = ["version"]

        [tool.setuptools.packages.find]
        include = ["cuda.*"]

        [tool.setuptools_scm]
        root = ".."
        tag_regex = "^{TAGS[package]}(?P<version>.*)$"
        git_describe_command = "git describe --dirty --tags --long --match {TAGS[package]}*"
        """) + ("this is not toml\n" if broken else ""))
    notes = root / "docs" / "source" / "release"
    notes.mkdir(parents=True, exist_ok=True)
    (notes / "1.2.0-notes.rst").write_text("notes\n")


def commit(repo, message):
    (repo / ".gitignore").write_text("build/\n*.egg-info/\n")  # as cuda-python's: build output is not source
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path):
    """An empty git repository (the cuda-python stand-in)."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


@pytest.fixture(scope="module")
def builder():
    return make_env(["setuptools>=77", "setuptools-scm>=8", "wheel"])


@pytest.fixture
def build(builder, tmp_path):
    cache = tmp_path / "cache"

    def run(repo, out_name, bindings="source", expect_ok=True):
        out = tmp_path / out_name
        env = dict(os.environ, CUDA_BENCH_CACHE=str(cache), CUDA_BENCH_BINDINGS=bindings,
                   CUDA_BENCH_CUDA_HOME=str(tmp_path), PYTHONPATH=str(ROOT))  # the stand-ins compile nothing
        proc = subprocess.run([str(builder), *MODULE, "build", str(repo), str(out)],
                              capture_output=True, text=True, env=env)
        assert (proc.returncode == 0) == expect_ok, proc.stderr[-3000:]
        record = json.loads((out / "build.json").read_text())
        return record, out, proc

    return run


def actions(record):
    return {name: info["action"] for name, info in record["packages"].items()}


@pytest.mark.slow
def test_builds_in_order_and_reuses_unchanged_packages(repo, build):
    for package in ("cuda_pathfinder", "cuda_bindings", "cuda_core"):
        write_package(repo, package)
    first = commit(repo, "all three")

    record, out, proc = build(repo, "first")
    assert record["ok"] and record["commit"] == first
    assert actions(record) == {"cuda_pathfinder": "built", "cuda_bindings": "built", "cuda_core": "built"}
    assert list(record["packages"]) == ["cuda_pathfinder", "cuda_bindings", "cuda_core"]
    assert sorted(p.name.split("-")[0] for p in out.glob("*.whl")) == ["cuda_bindings", "cuda_core", "cuda_pathfinder"]

    write_package(repo, "cuda_core", body="VALUE = 2\n")  # a commit that touches only cuda_core
    commit(repo, "core only")
    record, out, proc = build(repo, "second")
    assert actions(record) == {"cuda_pathfinder": "reused", "cuda_bindings": "reused", "cuda_core": "built"}

    write_package(repo, "cuda_bindings", body="VALUE = 3\n")  # cuda_core is compiled against the bindings
    commit(repo, "bindings only")
    record, out, proc = build(repo, "fourth")
    assert actions(record) == {"cuda_pathfinder": "reused", "cuda_bindings": "built", "cuda_core": "built"}

    (repo / "README").write_text("docs only\n")  # a commit that touches no package
    commit(repo, "docs")
    record, out, proc = build(repo, "third")
    assert set(actions(record).values()) == {"reused"}


@pytest.mark.slow
def test_layout_without_pathfinder_and_without_tags(repo, build):
    write_package(repo, "cuda_bindings")
    write_package(repo, "cuda_core")
    sha = commit(repo, "Nov 2024 layout")
    record, out, proc = build(repo, "out")
    assert list(record["packages"]) == ["cuda_bindings", "cuda_core"]
    (wheel,) = out.glob("cuda_core-*.whl")
    # no cuda-core-v* tag: after the newest release in the notes, naming the commit
    assert wheel.name.startswith(f"cuda_core-1.2.0.post1+g{sha[:9]}-")


@pytest.mark.slow
def test_release_tags_give_the_release_version(repo, build):
    write_package(repo, "cuda_pathfinder")
    write_package(repo, "cuda_core")
    commit(repo, "release")
    git(repo, "tag", "cuda-core-v0.3.2")
    git(repo, "tag", "cuda-pathfinder-v1.1.0")
    record, out, proc = build(repo, "out", bindings="13.3.1")
    # the bindings came from a wheel: recorded, not built
    assert record["packages"]["cuda_bindings"]["action"] == "wheel cuda-bindings==13.3.1"
    # that wheel needs a newer cuda-pathfinder than this release's 1.1.0: pip's upgrade is kept, the
    # release's own wheel is not installed over it, and the record says so
    made = dict(wheels.wheel_version(p) for p in out.glob("*.whl"))
    assert made.keys() == {"cuda-core", "cuda-bindings", "cuda-pathfinder"}
    assert made["cuda-core"] == "0.3.2" and made["cuda-bindings"] == "13.3.1"
    assert wheels.version_tuple(made["cuda-pathfinder"]) >= (1, 4)  # pip's, not the release's 1.1.0
    assert "replaced by cuda-pathfinder" in record["packages"]["cuda_pathfinder"]["action"]
    # OUT holds every wheel the environment has: asv reinstalls a cached build from OUT alone
    assert record["packages"]["cuda_bindings"]["wheels"] == sorted(
        p.name for p in out.glob("*.whl") if not p.name.startswith("cuda_core-"))


@pytest.mark.slow
def test_auto_bindings_follow_the_commits_cuda_extras(repo, build):
    write_package(repo, "cuda_core")
    commit(repo, "a CUDA 12 era cuda_core: no cu13 extra")
    assert trees.auto_bindings(repo) == "12.9.10"
    pyproject = repo / "cuda_core" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        "[tool.setuptools.packages.find]",
        '[project.optional-dependencies]\ncu12 = ["cuda-bindings==12.*"]\ncu13 = ["cuda-bindings==13.*"]\n\n'
        "[tool.setuptools.packages.find]"))
    commit(repo, "cu13 extra")
    record, out, proc = build(repo, "out", bindings="auto")
    assert record["bindings_requested"] == "auto" and record["bindings"] == "13.3.1"
    assert record["packages"]["cuda_bindings"]["action"] == "wheel cuda-bindings==13.3.1"


@pytest.mark.slow
def test_a_commit_that_cannot_build_is_recorded_with_the_reason(repo, build):
    write_package(repo, "cuda_pathfinder")
    write_package(repo, "cuda_bindings")
    write_package(repo, "cuda_core", broken=True)
    commit(repo, "broken pyproject")
    record, out, proc = build(repo, "out", expect_ok=False)
    assert record["ok"] is False
    assert "cuda_core" not in record["packages"]
    assert "pip" in record["error"] and "failed" in record["error"]
    assert "FAILED" in proc.stderr  # one readable line for asv's log, not a traceback
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_not_a_cuda_python_checkout(repo, build):
    (repo / "README").write_text("x\n")
    commit(repo, "x")
    record, out, proc = build(repo, "out", expect_ok=False)
    assert "has no cuda_core/" in record["error"]


def test_release_ladder_lists_release_tags_in_order_then_main(repo):
    from cuda_bench.run.asvrun import release_ladder

    shas = {}
    for tag, annotated in [("cuda-core-v0.10.0", True), ("cuda-core-v0.2.0", False),
                           ("cuda-core-v0.3.0rc1", False), ("cuda-pathfinder-v1.0.0", False)]:
        (repo / "f").write_text(tag)
        shas[tag] = commit(repo, tag)
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "tag", *(["-a", "-m", tag] if annotated else []), tag)
    (repo / "f").write_text("head")
    head = commit(repo, "head")
    assert release_ladder(str(repo)) == [
        ("cuda-core-v0.2.0", shas["cuda-core-v0.2.0"]),
        ("cuda-core-v0.10.0", shas["cuda-core-v0.10.0"]),  # numeric order; the commit, not the tag object
        ("main", head),
    ]


def test_shallow_clone_keeps_main_and_every_release_tag(repo, tmp_path):
    for i, tag in enumerate(["cuda-core-v0.1.0", "cuda-core-v0.2.0rc1", "cuda-core-v0.2.0"]):
        (repo / "f").write_text(str(i))
        commit(repo, tag)
        git(repo, "tag", tag)
    for i in range(5):
        (repo / "f").write_text(f"main {i}")
        commit(repo, f"main {i}")
    dest = tmp_path / "small.git"
    subprocess.run(["bash", str(ROOT / "scripts" / "shallow_clone.sh"), str(repo), str(dest), "2"], check=True,
                   capture_output=True)
    assert git(dest, "tag").split() == ["cuda-core-v0.1.0", "cuda-core-v0.2.0"]  # no release candidates
    assert len(git(dest, "log", "--format=%H", "main").split()) == 2
    assert git(dest, "rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD")  # offline_run's default, HEAD^!
    assert git(dest, "rev-parse", "cuda-core-v0.2.0^{commit}") == git(repo, "rev-parse", "cuda-core-v0.2.0^{commit}")


DEVICE_PYX = """\
from __future__ import annotations

cimport cpython

class Device:
    def set_current(self, ctx=None):
        if ctx is None:
            with nogil:
                HANDLE_RETURN(cydriver.cuCtxSetCurrent(as_cu(h_context)))
"""


def inject_spin(repo, turns, check=True, *kind):
    return subprocess.run(["bash", str(ROOT / "scripts" / "inject_spin.sh"), str(repo), str(turns), *kind],
                          capture_output=True, text=True, check=check)


def test_inject_spin_adds_one_fixed_spin_before_set_current_and_nothing_else(repo, tmp_path):
    pyx = repo / "cuda_core" / "cuda" / "core" / "_device.pyx"
    pyx.parent.mkdir(parents=True)
    pyx.write_text(DEVICE_PYX)
    (repo / "other.txt").write_text("untouched")
    base = commit(repo, "base")
    inject_spin(repo, 96)
    branch = git(repo, "rev-parse", "bench-inject-spin96")
    assert git(repo, "rev-parse", "bench-inject-spin96^") == base
    assert git(repo, "diff", "--name-only", base, branch) == "cuda_core/cuda/core/_device.pyx"
    added = [line[1:] for line in git(repo, "diff", "-U0", base, branch).splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert "    static inline void cuda_bench_spin(int n) { for (volatile int i = 0; i < n; ++i) {} }" in added
    assert "                cuda_bench_spin(96)" in added  # inside the nogil block, just before the call
    patched = git(repo, "show", f"{branch}:cuda_core/cuda/core/_device.pyx").splitlines()
    call = next(i for i, line in enumerate(patched) if "cuCtxSetCurrent" in line)
    assert patched[call - 1].strip() == "cuda_bench_spin(96)"
    # a clone elsewhere (the carried bare one) gets the same commit: the shas in measurements/ can be made again
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(bare)], check=True)
    inject_spin(bare, 96)
    assert git(bare, "rev-parse", "bench-inject-spin96") == branch
    inject_spin(bare, 24)
    assert git(bare, "rev-parse", "bench-inject-spin24") != branch


def test_inject_spin_python_adds_n_python_calls_under_the_gil_before_set_current(repo):
    """KIND python: N calls of a Python no-op (work the counts see: +N Python calls), taken with the GIL inside
    the nogil block just before cuCtxSetCurrent; nothing else changes, and a call outside a nogil block is
    refused rather than patched into code that would not compile."""
    pyx = repo / "cuda_core" / "cuda" / "core" / "_device.pyx"
    pyx.parent.mkdir(parents=True)
    pyx.write_text(DEVICE_PYX)
    base = commit(repo, "base")
    inject_spin(repo, 24, True, "main", "python")
    branch = git(repo, "rev-parse", "bench-inject-pyspin24")
    assert git(repo, "rev-parse", "bench-inject-pyspin24^") == base
    patched = git(repo, "show", f"{branch}:cuda_core/cuda/core/_device.pyx").splitlines()
    call = next(i for i, line in enumerate(patched) if "cuCtxSetCurrent" in line)
    assert [line.strip() for line in patched[call - 3:call]] == ["with nogil:", "with gil:", "cuda_bench_py_spin(24)"]
    assert '_cuda_bench_noop = eval("lambda: None")  # a Python function: each call is one Python call' in patched
    assert patched[patched.index("cdef void cuda_bench_py_spin(int n):") + 2].strip() == "_cuda_bench_noop()"
    assert "bench-inject-spin24" not in git(repo, "branch")  # the C spin is another branch
    pyx.write_text(DEVICE_PYX.replace("            with nogil:\n", "            if True:\n"))
    commit(repo, "the call holds the GIL")
    proc = inject_spin(repo, 8, False, "main", "python")
    assert proc.returncode == 1 and "write the Python spin by hand" in proc.stderr


def test_inject_spin_refuses_a_tree_without_the_call(repo):
    pyx = repo / "cuda_core" / "cuda" / "core" / "_device.pyx"
    pyx.parent.mkdir(parents=True)
    pyx.write_text(DEVICE_PYX.replace("cuCtxSetCurrent", "cuCtxPushCurrent"))
    commit(repo, "base")
    proc = inject_spin(repo, 96, check=False)
    assert proc.returncode == 1 and "write the spin by hand" in proc.stderr
    assert "bench-inject-spin96" not in git(repo, "branch")


@pytest.mark.slow
def test_prebuild_fills_the_cache_for_several_commits_at_once(repo, builder, tmp_path):
    for package in ("cuda_pathfinder", "cuda_core"):
        write_package(repo, package)
    first = commit(repo, "first")
    write_package(repo, "cuda_core", body="VALUE = 2\n")
    second = commit(repo, "core changed")
    env = dict(os.environ, CUDA_BENCH_CACHE=str(tmp_path / "cache"), CUDA_BENCH_BINDINGS="13.3.1",
               CUDA_BENCH_CUDA_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    proc = subprocess.run([str(builder), *MODULE, "prebuild", str(repo), first, second, "no-such-rev",
                           "--parallel", "3", "--logs", str(tmp_path / "logs")],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 1, proc.stderr[-3000:]  # one commit could not be built: said, not hidden
    assert "no-such-rev: FAILED" in proc.stderr and proc.stderr.count(": ok in ") == 2
    assert "Traceback" not in proc.stderr
    # asv's build step, one commit after the other, now only copies wheels out of the cache
    for sha in (first, second):
        git(repo, "checkout", "-q", sha)
        out = tmp_path / f"out-{sha[:7]}"
        subprocess.run([str(builder), *MODULE, "build", str(repo), str(out)], check=True,
                       capture_output=True, text=True, env=env)
        record = json.loads((out / "build.json").read_text())
        actions = {k: v["action"].split(";")[0] for k, v in record["packages"].items()}
        assert actions == {"cuda_pathfinder": "reused", "cuda_bindings": "wheel cuda-bindings==13.3.1",
                           "cuda_core": "reused"}
    # carried for a GPU box: each entry with what compiled its wheel, and an entry carried before it was kept gets it
    carried = tmp_path / "carry"
    proc = subprocess.run([str(builder), *MODULE, "carry", str(repo), str(carried), first, second],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    kept = sorted(carried.glob("cuda_core/*/built-with.json"))
    assert len(kept) == 2 and json.loads(kept[0].read_text())["compiler"]
    kept[0].unlink()
    subprocess.run([str(builder), *MODULE, "carry", str(repo), str(carried), first, second], check=True,
                   capture_output=True, text=True, env=env)
    assert kept[0].exists()


COUNTING_SETUP = """import os, pathlib, sys, time
from setuptools import setup
if os.environ.get("CUDA_BENCH_TEST_BUILDS") and "bdist_wheel" in sys.argv:  # a line per build, slow enough to overlap
    with open(os.environ["CUDA_BENCH_TEST_BUILDS"], "a") as f:
        f.write(pathlib.Path.cwd().name + "\\n")
    time.sleep(3)
setup()
"""


@pytest.mark.slow
def test_prebuild_builds_each_tree_once_and_the_commits_that_share_it_take_it_from_the_cache(repo, builder, tmp_path):
    """Three commits share one cuda_bindings tree and differ in cuda_core: prebuilt three at once, the bindings
    are built once (the other two wait for that build and reuse it) and each cuda_core once; the first line says
    how many builds the list needs."""
    write_package(repo, "cuda_pathfinder")
    write_package(repo, "cuda_bindings")
    (repo / "cuda_bindings" / "setup.py").write_text(COUNTING_SETUP)
    shas = []
    for value in range(3):
        write_package(repo, "cuda_core", body=f"VALUE = {value}\n")
        shas.append(commit(repo, f"core {value}"))
    built = tmp_path / "bindings-builds"
    env = dict(os.environ, CUDA_BENCH_CACHE=str(tmp_path / "cache"), CUDA_BENCH_BINDINGS="source",
               CUDA_BENCH_CUDA_HOME=str(tmp_path), PYTHONPATH=str(ROOT), CUDA_BENCH_TEST_BUILDS=str(built))
    proc = subprocess.run([str(builder), *MODULE, "prebuild", str(repo), *shas, "--parallel", "3"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "3 commits need 1 cuda_pathfinder, 1 cuda_bindings, 3 cuda_core builds" in proc.stderr
    assert len(built.read_text().splitlines()) == 1
    assert proc.stderr.count(": ok in ") == 3
    # the list again: nothing to build
    again = subprocess.run([str(builder), *MODULE, "prebuild", str(repo), *shas], capture_output=True, text=True,
                           env=env)
    assert "3 commits need no build (every package in the wheel cache)" in again.stderr
    assert len(built.read_text().splitlines()) == 1


def test_prebuild_starts_the_commits_that_wait_for_nothing_first(repo, tmp_path, monkeypatch):
    """Commits 0, 1 and 2 share a cuda_bindings tree, 3 has its own: 0 and 3 start first, then 1 and 2."""
    monkeypatch.setenv("CUDA_BENCH_CACHE", str(tmp_path / "cache"))
    write_package(repo, "cuda_bindings")
    shas = []
    for value in range(3):
        write_package(repo, "cuda_core", body=f"VALUE = {value}\n")
        shas.append(commit(repo, f"core {value}"))
    write_package(repo, "cuda_bindings", body="VALUE = 2\n")
    shas.append(commit(repo, "bindings changed"))
    order, words = build_module.build_order(repo, shas, "source")
    assert order == [0, 3, 1, 2]
    assert words == "2 cuda_bindings, 4 cuda_core builds"


@pytest.mark.parametrize("declared, wanted", [
    ('dependencies = ["numpy", "cuda-python <13"]', True),      # cuda-core 0.1.0
    ('cu12 = ["cuda-python==12.*"]', True),                    # cuda-core 0.1.1
    ('cu12 = ["cuda-bindings==12.*"]', False),                 # cuda-core 0.2 and later
])
def test_cuda_core_0_1_gets_the_cuda_python_metapackage(tmp_path, declared, wanted):
    (tmp_path / "cuda_core").mkdir()
    (tmp_path / "cuda_core" / "pyproject.toml").write_text(f'[project]\nname = "cuda-core"\n{declared}\n')
    assert wheels.wants_cuda_python_metapackage(tmp_path) is wanted


def test_revisions_resolve_as_asv_resolves_them(repo, tmp_path):
    """A plain clone has its branches only as remote-tracking ones (origin/main): prebuild and the paired
    engine accept what asv run accepts there, a SHA, a tag, a branch."""
    write_package(repo, "cuda_core")
    sha = commit(repo, "one")
    git(repo, "tag", "cuda-core-v9.9.9")
    git(repo, "branch", "feature")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "checkout", "-q", "--detach")
    git(clone, "branch", "-D", "main")  # main now exists only as origin/main
    for rev in ("main", "feature", "cuda-core-v9.9.9", sha, sha[:9]):
        assert trees.resolve(clone, rev) == sha, rev
    with pytest.raises(toolkit.BuildError, match="no commit, tag or branch named 'nope'"):
        trees.resolve(clone, "nope")


@pytest.mark.slow
def test_an_environment_per_commit_for_the_paired_engine(repo, tmp_path, monkeypatch):
    """environment.environment: a virtual environment with the commit's packages installed, built through the
    wheel cache, reused the second time; its record says what was built and installed."""
    monkeypatch.setenv("CUDA_BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CUDA_BENCH_CUDA_HOME", str(tmp_path))
    for package in ("cuda_pathfinder", "cuda_bindings", "cuda_core"):
        write_package(repo, package)
    sha = commit(repo, "all three")
    path = tmp_path / "envs" / sha[:12]
    record = build_module.environment(repo, "main", path, "source", log_path=tmp_path / "logs" / "build.log")
    assert record["commit"] == sha and record["build"]["ok"]
    assert set(record["installed"]) >= {"cuda-core", "cuda-bindings", "cuda-pathfinder", "python"}
    assert record["installed"]["cuda-core"].startswith("1.2.0.post1+g")
    probe = subprocess.run([record["python"], "-c", "import cuda.core, cuda.bindings; print(cuda.core.VALUE)"],
                           capture_output=True, text=True, check=True)
    assert probe.stdout.strip() == "1"
    assert not (path / "src").exists()  # the checkout is not kept
    again = build_module.environment(repo, "main", path, "source")
    assert again == record  # reused, not rebuilt
    (path / "cuda-bench-env.json").write_text('{"rev": "main", "comm')  # a record cut off: built again
    rebuilt = build_module.environment(repo, "main", path, "source")
    assert (rebuilt["commit"], rebuilt["python"], rebuilt["installed"]) == (sha, record["python"], record["installed"])
    assert json.loads((path / "cuda-bench-env.json").read_text()) == rebuilt


@pytest.mark.slow
def test_a_release_pathfinder_too_old_for_the_bindings_wheel_is_upgraded(repo, build):
    """cuda-bindings 12.9.10 accepts cuda-pathfinder ~=1.1, but a release's own 1.1.0 cannot load the driver
    under it (KeyError 'cuda' on the H200, cuda-core 0.3.2): below 1.3, pip's newest for the wheel is kept."""
    write_package(repo, "cuda_pathfinder")
    write_package(repo, "cuda_core")
    commit(repo, "release")
    git(repo, "tag", "cuda-core-v0.3.2")
    git(repo, "tag", "cuda-pathfinder-v1.1.0")
    record, out, proc = build(repo, "out", bindings="12.9.10")
    assert "replaced by cuda-pathfinder 1." in record["packages"]["cuda_pathfinder"]["action"]
    made = dict(wheels.wheel_version(p) for p in out.glob("*.whl"))
    assert made["cuda-core"] == "0.3.2" and made["cuda-bindings"] == "12.9.10"
    assert wheels.version_tuple(made["cuda-pathfinder"]) >= wheels.WHEEL_PATHFINDER
    kept = record["packages"]["cuda_pathfinder"]["action"].split("cuda-pathfinder ")[1]
    assert wheels.version_tuple(kept) >= (1, 3)


def test_a_commands_temporary_folder_goes_whole_with_what_the_processes_it_ran_left_there(tmp_path, monkeypatch,
                                                                                            capsys):
    """Every cuda-bench command runs in a temporary folder of its own (the TMPDIR of all it starts: asv, pip, the
    builds), removed however the command ends: what pip leaves when an interrupt stops it (``pip-install-*``,
    ``pip-build-tracker-*``) goes with it, and the system's temporary folder is as it was."""
    import sys
    import tempfile

    from cuda_bench import cli
    from cuda_bench.commands import COMMANDS

    system_tmp = tmp_path / "tmp"
    system_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(system_tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    seen = []

    def interrupted_in_pip(args, argv):
        left = "import tempfile, pathlib; pathlib.Path(tempfile.mkdtemp(prefix='pip-install-'), 'setup.py').touch()"
        subprocess.run([sys.executable, "-c", left], check=True)
        seen.extend(p.relative_to(system_tmp) for p in system_tmp.rglob("pip-install-*"))
        raise KeyboardInterrupt

    monkeypatch.setattr(COMMANDS["plan"], "main", interrupted_in_pip)
    assert cli.main(["plan"]) == 130
    assert len(seen) == 1 and len(seen[0].parts) == 2  # in the command's own folder, not beside it
    assert list(system_tmp.iterdir()) == [] and os.environ["TMPDIR"] == str(system_tmp)
    assert capsys.readouterr().err.startswith("bench: interrupted after ")


def test_a_record_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """process.write_whole (builds.jsonl, the engine's environment record, the build_ext config): a write that
    fails midway leaves the old file as it was and no temporary file beside it."""
    path = tmp_path / "builds.jsonl"
    previous = os.umask(0o027)
    try:
        process.write_whole(tmp_path / "shared.json", "{}")  # a file of its own: not the one checked below
    finally:
        os.umask(previous)
    assert (tmp_path / "shared.json").stat().st_mode & 0o777 == 0o640  # as open() under that umask: not 0600, 0644
    process.write_whole(path, "old\n")
    assert path.stat().st_mode & 0o777 == 0o666 & ~previous  # readable as any file written the plain way
    path.chmod(0o600)
    process.write_whole(path, "old\n")
    assert path.stat().st_mode & 0o777 == 0o600  # an existing file keeps its mode
    monkeypatch.setattr(process.os, "replace", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left")))
    with pytest.raises(OSError):
        process.write_whole(path, "new\n")
    assert path.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["builds.jsonl", "shared.json"]


def test_places_on_main_from_a_shallow_clone_join_the_recorded_scale_or_are_left_out(tmp_path, repo):
    """results/commits.json places each measured commit on main's first-parent line (the dashboard orders by it).
    A GPU box often has a shallow clone, whose count starts at its own oldest commit: a commit both know puts its
    places on the recorded scale; with none in common they are left out, never mixed in."""
    from cuda_bench.run import asvrun

    shas = []
    for i in range(5):
        (repo / "f").write_text(str(i))
        shas.append(commit(repo, f"c{i}"))
    side = tmp_path / "commits.json"
    asvrun.record_commits(repo, [shas[1], shas[3]], path=side)
    assert [json.loads(side.read_text())[s]["position"] for s in (shas[1], shas[3])] == [2, 4]
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", "-b", "main", f"file://{repo}", str(shallow))
    assert asvrun.record_commits(shallow, [shas[4]], path=side)[shas[4]]["position"] == 5  # by shas[3], known at 4
    alone = tmp_path / "alone.json"
    found = asvrun.record_commits(shallow, [shas[4]], path=alone)
    assert found[shas[4]]["position"] is None and found[shas[4]]["title"] == "c4"
    # a commit the file placed, recorded again from a clone too shallow to count it, keeps its place
    too_shallow = tmp_path / "too-shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "-b", "main", f"file://{repo}", str(too_shallow))
    git(too_shallow, "fetch", "-q", "--depth", "1", "origin", shas[1])
    assert asvrun.record_commits(too_shallow, [shas[1]], path=side)[shas[1]]["position"] == 2


def test_a_build_that_fails_or_is_interrupted_stops_the_builds_beside_it(tmp_path):
    """Builds run in threads, each in a process group of its own: when one fails (here) or the command is
    interrupted, in_builds kills those still running and returns at once, instead of waiting minutes for their
    compiles."""
    import time

    def task(item):
        if item == "fails":
            time.sleep(0.5)
            raise toolkit.BuildError("this build failed")
        proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
        toolkit.CHILDREN.add(proc)
        try:
            proc.wait()
        finally:
            toolkit.CHILDREN.discard(proc)
        return proc.returncode

    start = time.monotonic()
    with pytest.raises(toolkit.BuildError, match="this build failed"):
        toolkit.in_builds(task, ["sleeps", "fails"], 2)
    assert time.monotonic() - start < 10 and not toolkit.CHILDREN and not toolkit.STOPPING


#: a cuda_core whose build, run by pip, says where it is (the temporary folder pip gave it) and then takes two minutes
SLOW_SETUP = """import os, pathlib, tempfile, time
from setuptools import setup
marker = os.environ.get("CUDA_BENCH_TEST_MARKER")
if marker and os.environ.get("CUDA_BENCH_TEST_SLOW") == "1":
    pathlib.Path(tempfile.mkdtemp(prefix="backend-own-"), "x").write_text("a build's own temporary file")
    pathlib.Path(marker).write_text(tempfile.gettempdir())
    time.sleep(120)
setup()
"""


def live_with(mark):
    """The pids of live processes whose environment holds ``mark``."""
    from pathlib import Path

    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes() and (entry / "stat").read_text().split()[2] != "Z":
                    found.append(int(entry.name))
            except (OSError, IndexError):
                continue
    return found


@pytest.mark.slow
@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"], ids=["ctrl-c", "sigterm"])
def test_a_build_interrupted_in_pip_wheel_leaves_no_temporary_folder_and_no_cache_entry(repo, builder, tmp_path,
                                                                                        signum):
    """The build step, interrupted while pip builds cuda_core's wheel (Ctrl-C to its process group, as a terminal
    sends it; SIGTERM to the build alone, as asv or a job scheduler sends it): it stops within seconds, every
    process it started with it; no folder of pip's or of the build backend stays in the temporary folder, no
    hidden half-made entry in the wheel cache; and the next build of the commit, uninterrupted, succeeds."""
    import signal
    import time
    import uuid

    write_package(repo, "cuda_pathfinder")
    write_package(repo, "cuda_core")
    (repo / "cuda_core" / "setup.py").write_text(SLOW_SETUP)
    commit(repo, "a cuda_core that builds slowly")
    cache, system_tmp, marker = tmp_path / "cache", tmp_path / "tmp", tmp_path / "in-pip-wheel"
    mark = uuid.uuid4().hex  # in the environment of every process the build starts
    system_tmp.mkdir()
    env = dict(os.environ, CUDA_BENCH_CACHE=str(cache), CUDA_BENCH_BINDINGS="source",
               CUDA_BENCH_CUDA_HOME=str(tmp_path), PYTHONPATH=str(ROOT), TMPDIR=str(system_tmp),
               CUDA_BENCH_TEST_MARKER=str(marker), CUDA_BENCH_TEST_SLOW="1", CUDA_BENCH_TEST_MARK=mark)
    proc = subprocess.Popen([str(builder), *MODULE, "build", str(repo), str(tmp_path / "out")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=as_a_terminal_starts_it)
    try:
        deadline = time.monotonic() + 300
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marker.exists(), proc.stderr.read()[-3000:] if proc.poll() is not None else "no pip wheel in 300 s"
        assert (cache / "cuda_core").is_dir() and any(p.name.startswith(".") for p in (cache / "cuda_core").iterdir())
        sent = time.monotonic()
        if signum == "SIGINT":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode != 0 and took < 20, (proc.returncode, took, err[-2000:])
    time.sleep(0.5)
    assert live_with(mark) == [], err[-2000:]
    assert not marker.read_text().startswith(str(system_tmp))  # pip and its backend had a folder of the build's
    assert sorted(p.name for p in system_tmp.iterdir()) == [], err[-2000:]
    assert [p.name for p in (cache / "cuda_core").iterdir()] == [], err[-2000:]  # no hidden half-made entry
    record = json.loads((tmp_path / "out" / "build.json").read_text())
    assert record["ok"] is False
    done = subprocess.run([str(builder), *MODULE, "build", str(repo), str(tmp_path / "again")],
                          env=dict(env, CUDA_BENCH_TEST_SLOW="0"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert [p.name for p in (cache / "cuda_core").iterdir() if p.name.startswith(".")] == []
    assert sorted(p.name for p in system_tmp.iterdir()) == []


TALKING_SETUP = """import os, time
from setuptools import setup
for i in range(int(os.environ.get("CUDA_BENCH_TEST_LINES", "0"))):  # a compile that says what it does
    print(f"compiling part {i}", flush=True)
    time.sleep(float(os.environ["CUDA_BENCH_TEST_GAP"]))
time.sleep(float(os.environ.get("CUDA_BENCH_TEST_SILENT", "0")))  # one that hangs
setup()
"""


@pytest.mark.slow
def test_a_build_longer_than_asvs_limit_goes_on_while_it_compiles_and_one_that_hangs_is_named_timed_out(
        repo, builder, tmp_path):
    """asv stops a build step that says nothing for install_timeout seconds (its util.check_output, run here as
    asv runs the build command, with a limit of 8 s): a build that compiles for three times that, saying so, ends
    well, for the step passes on that it goes on; a build silent for longer is stopped, its record keeps why
    (stopped by SIGTERM, how long it had said nothing), and the line said after asv's command names it timed out,
    with the build to run outside asv's limit."""
    import time

    from asv import util

    from cuda_bench.run import asvrun

    write_package(repo, "cuda_pathfinder")
    write_package(repo, "cuda_core")
    (repo / "cuda_core" / "setup.py").write_text(TALKING_SETUP)
    sha = commit(repo, "a cuda_core that compiles for a while")
    limit = 8
    env = dict(os.environ, CUDA_BENCH_CACHE=str(tmp_path / "cache"), CUDA_BENCH_BINDINGS="source",
               CUDA_BENCH_CUDA_HOME=str(tmp_path), PYTHONPATH=str(ROOT), CUDA_BENCH_HEARTBEAT="2")

    def asv_builds(out, **test_env):
        return util.check_output([str(builder), *MODULE, "build", str(repo), str(out)], timeout=limit, dots=False,
                                 display_error=False, valid_return_codes=None, return_stderr=True,
                                 env=env | test_env)

    talking = tmp_path / "env" / "a" / "asv-build-cache" / "talking" / "wheels"
    start = time.monotonic()
    out, err, code = asv_builds(talking, CUDA_BENCH_TEST_LINES="12", CUDA_BENCH_TEST_GAP="2")
    assert code == 0 and time.monotonic() - start > 3 * limit, (code, out[-2000:], err[-2000:])
    assert json.loads((talking / "build.json").read_text())["ok"] is True
    assert "lines of output in" in out  # what kept asv from stopping it

    since = time.time()
    silent = tmp_path / "env" / "a" / "asv-build-cache" / "silent" / "wheels"
    shutil.rmtree(tmp_path / "cache")  # built again, not reused
    out, err, code = asv_builds(silent, CUDA_BENCH_TEST_SILENT="60")
    assert code == util.TIMEOUT_RETCODE, (code, out[-2000:], err[-2000:])
    record = json.loads((silent / "build.json").read_text())
    assert record["ok"] is False and record["error"].startswith("stopped (SIGTERM) after ")
    assert record["silent_seconds"] >= limit - 1
    (line,) = asvrun.stopped_builds(tmp_path / "env", since, limit)
    assert line.startswith(f"the build of {sha[:9]} timed out after ")
    assert f"cuda-bench prebuild {sha[:9]}" in line and "install_timeout (8 s)" in line
    assert asvrun.stopped_builds(tmp_path / "env", time.time() + 60, limit) == []  # only what this command built


@pytest.mark.slow
def test_an_interrupted_prebuild_says_one_line_keeps_the_log_it_names_and_leaves_no_temporary_folder(repo, tmp_path):
    """`cuda-bench prebuild`, Ctrl-C while pip builds: exit status 130 and one line, no traceback; the build's log
    is where the command said a failed build's log is kept; and nothing of the command, of pip or of the build
    backend stays in the temporary folder (the command's own, which holds theirs, goes whole)."""
    import re
    import sys

    write_package(repo, "cuda_pathfinder")
    write_package(repo, "cuda_core")
    (repo / "cuda_core" / "setup.py").write_text(SLOW_SETUP)
    sha = commit(repo, "a cuda_core that builds slowly")
    system_tmp, marker = tmp_path / "tmp", tmp_path / "in-pip-wheel"
    system_tmp.mkdir()
    (tmp_path / "home").mkdir()
    env = dict(os.environ, HOME=str(tmp_path / "home"), CUDA_BENCH_CACHE=str(tmp_path / "cache" / "wheels"),
               CUDA_BENCH_CUDA_HOME=str(tmp_path), PYTHONPATH=str(ROOT), TMPDIR=str(system_tmp),
               CUDA_BENCH_TEST_MARKER=str(marker), CUDA_BENCH_TEST_SLOW="1")
    code, _, err, _ = ctrl_c_when(marker, [sys.executable, "-m", "cuda_bench", "prebuild", "--repo", str(repo),
                                           "--bindings", "source", sha], env=env, cwd=ROOT)
    assert code == 130, err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    assert err.strip().splitlines()[-1].startswith("bench: interrupted after "), err[-3000:]
    assert err.replace(str(tmp_path), "").count("interrupted") == 1, err[-3000:]
    (kept,) = re.findall(r"a failed build's log is kept in (\S+)", err)
    assert [p.name for p in Path(kept).iterdir()] == [f"prebuild-0-{sha}.log"], err[-3000:]
    assert sorted(p.name for p in system_tmp.iterdir()) == [], err[-3000:]


SPINNING_SETUP = """import subprocess, sys
from setuptools import setup
# a compiler's work: a child that spends CUDA_BENCH_TEST_CPU seconds of CPU (its own clock), which pip waits for
subprocess.run([sys.executable, "-c", "import os, time\\n"
                "while time.process_time() < float(os.environ['CUDA_BENCH_TEST_CPU']): pass"], check=True)
setup()
"""


@pytest.mark.slow
def test_a_build_records_the_cpu_seconds_of_what_pip_ran_and_each_tree_it_compiled_once(repo, builder, tmp_path):
    write_package(repo, "cuda_pathfinder")
    write_package(repo, "cuda_core")
    (repo / "cuda_core" / "setup.py").write_text(SPINNING_SETUP)
    sha = commit(repo, "a cuda_core whose build spends two CPU seconds")
    env = dict(os.environ, CUDA_BENCH_CACHE=str(tmp_path / "cache"), CUDA_BENCH_BINDINGS="source",
               CUDA_BENCH_CUDA_HOME=str(tmp_path), PYTHONPATH=str(ROOT), CUDA_BENCH_TEST_CPU="2.0",
               CUDA_BENCH_JOBS="3")
    made = []
    for out in ("first", "again"):
        proc = subprocess.run([str(builder), *MODULE, "build", str(repo), str(tmp_path / out)], env=env,
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        made.append(json.loads((tmp_path / out / "build.json").read_text()))
    core = made[0]["packages"]["cuda_core"]["compile"]
    assert core["cpu_seconds"] >= 2.0 and core["jobs"] == 3 and core["ccache"] == bool(shutil.which("ccache"))
    assert core["versions"]["setuptools"] and core["versions"]["python"] and "cython" in core["versions"]
    # its own build alone (pip's own second or so), without cuda_core's two
    assert made[0]["packages"]["cuda_pathfinder"]["compile"]["cpu_seconds"] <= core["cpu_seconds"] - 1.5
    assert "compile" not in made[1]["packages"]["cuda_core"]  # from the wheel cache: nothing compiled
    # what compiled it travels with the wheel: the reuse says the same compiler and Cython as the build
    assert made[1]["packages"]["cuda_core"]["built_with"] == core["versions"] == made[0]["packages"]["cuda_core"][
        "built_with"]
    from cuda_bench.results import buildtime, records

    history = tmp_path / "history"
    buildtime.keep(history, [dict(made[0], commit=sha), dict(made[1], commit=sha)])
    compiles = records.read(history, "compile")
    assert sorted(c["package"] for c in compiles) == ["cuda_core", "cuda_pathfinder"]
