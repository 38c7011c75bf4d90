"""An environment holds what its build used, whether asv has just built it or reinstalls it from its build cache;
a broken environment fails its cases instead of skipping them; and a measured value is never replaced by a skip.

On real asv (virtualenv environments), with the real cuda-core 1.2.2 and cuda-bindings 13.3.1 wheels from PyPI
and a git repository whose cuda_core/ tree hash keys the cuda-core wheel in the build's wheel cache (so the
build step reuses it: no compiler). No GPU: the cases timed are GPU-free (``CUresult(0)``).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, ctrl_c_when, git

from cuda_bench.build import trees
from cuda_bench.foundations.paths import result_files

#: real asv on real environments: the full suite's lane
pytestmark = pytest.mark.slow

BINDINGS = "13.3.1"
CASE = "bench_enum.ResultFromValue.time_result_from_value"  # CUresult(0): cuda.bindings, no GPU needed
CORE_CASE = "bench_launch.LaunchConfigCreate.time_launch_config_create"  # cuda.core's, no GPU needed
CASES = f"^({CASE}|{CORE_CASE})"


def asv(conf, *args, env):
    return subprocess.run([sys.executable, "-m", "asv", *args, "--config", str(conf)], capture_output=True,
                          text=True, cwd=conf.parent, env=env)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A cuda-python-shaped repository, the project's asv configuration pointed at it, and one ``asv run`` of
    one GPU-free case: (conf, env, repo, results folder, first results file's JSON, that run's output)."""
    import json5

    tmp = tmp_path_factory.mktemp("project")
    repo = tmp / "repo"
    (repo / "cuda_core").mkdir(parents=True)
    (repo / "cuda_core" / "pyproject.toml").write_text('[project]\nname = "cuda-core"\n')
    git(tmp, "init", "-q", "-b", "main", str(repo))
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "cuda_core")
    wheels = tmp / "wheel-cache"
    key = f"{git(repo, 'rev-parse', 'HEAD:cuda_core')}-{trees.python_tag()}-{trees.VERSION_SCHEME}-bindings{BINDINGS}"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d",
                    str(wheels / "cuda_core" / key), "cuda-core==1.2.2"], check=True)

    conf = json5.loads((ROOT / "asv.conf.json").read_text())
    for key_ in ("build_command", "install_command", "uninstall_command"):
        conf[key_] = [cmd.replace("{conf_dir}", str(ROOT)) for cmd in conf[key_]]
    conf.update(repo=str(repo), benchmark_dir=str(ROOT / "benchmarks"), env_dir=str(tmp / "env"),
                results_dir=str(tmp / "results"), html_dir=str(tmp / "html"), build_cache_size=2,
                pythons=[f"{sys.version_info.major}.{sys.version_info.minor}"],
                matrix={"req": {"pip+asv_runner": ["0.2.5"], "numpy": [""]},
                        "env": {"CUDA_BENCH_BINDINGS": [BINDINGS]}})
    path = tmp / "asv.conf.json"
    path.write_text(json.dumps(conf, indent=1))
    env = dict(os.environ, HOME=str(tmp / "home"), CUDA_BENCH_CACHE=str(wheels))  # pip's cache: the tests' own
    (tmp / "home").mkdir()
    assert asv(path, "machine", "--yes", "--machine", "cpu-test", env=env).returncode == 0
    first = asv(path, "run", "-b", CASES, "--machine", "cpu-test", "--show-stderr", "HEAD^!", env=env)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    results = tmp / "results-no-gpu" / "cpu-test"  # no GPU here: beside the environments, not in results/
    (results_file,) = result_files(results)
    return path, env, repo, results, json.loads(results_file.read_text()), first


def installed_elsewhere(conf):
    """As after another commit was measured in the environment: asv then reinstalls this one, from its build cache
    (asv keeps the installed commit in asv-install-status.json; without it, it uninstalls and installs again)."""
    (status,) = (conf.parent / "env").glob("*/asv-install-status.json")
    status.unlink()


def case_entry(data, case=CASE, api="bindings"):
    entry = dict(zip(data["result_columns"], data["results"][case]))
    return entry["result"][entry["params"][0].index(f"'{api}'")], entry["started_at"]


def test_a_run_without_a_gpu_writes_nothing_into_the_configured_results(project):
    conf, _, _, results, data, first = project
    value, _ = case_entry(data)
    assert math.isfinite(value) and 0 < value < 1e-3
    assert not (conf.parent / "results").exists()
    assert "no GPU on this machine: results go to" in first.stderr


def test_a_reinstall_from_asvs_build_cache_holds_the_bindings_and_the_case_runs_again(project):
    """asv reinstalls a commit it has built before from its build cache, after its uninstall command removed
    cuda-core, cuda-bindings and cuda-pathfinder: the cached folder must hold every wheel. The wheel cache the
    build reused is gone, so a second build could not happen: this run can only have come from asv's cache."""
    conf, env, _, results, data, _ = project
    shutil.rmtree(env["CUDA_BENCH_CACHE"])
    installed_elsewhere(conf)
    again = asv(conf, "run", "-b", CASE, "--machine", "cpu-test", "--show-stderr", "HEAD^!", env=env)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    (results_file,) = result_files(results)
    value, started = case_entry(json.loads(results_file.read_text()))
    assert math.isfinite(value) and started > case_entry(data)[1]  # measured again, not kept
    (python,) = (conf.parent / "env").glob("*/bin/python")
    held = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('cuda-bindings'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert held == BINDINGS


def test_a_case_that_ran_and_is_skipped_now_keeps_its_measured_value_and_the_run_says_so(project):
    """A later run that skips a case the results file holds a measured value of (here the process leaves
    cuda.core out, CUDA_BENCH_LEAVE_OUT) keeps that value, names the case and exits 2."""
    conf, env, _, results, _, _ = project
    (results_file,) = result_files(results)
    before = case_entry(json.loads(results_file.read_text()), CORE_CASE, "core")
    assert math.isfinite(before[0])
    skipped = asv(conf, "run", "-b", CASES, "--machine", "cpu-test", "--show-stderr", "HEAD^!",
                  env=dict(env, CUDA_BENCH_LEAVE_OUT="core"))
    assert skipped.returncode == 2, skipped.stdout[-3000:] + skipped.stderr[-3000:]
    assert f"{CORE_CASE}('core') at" in skipped.stderr and "the measured value is kept" in skipped.stderr
    assert case_entry(json.loads(results_file.read_text()), CORE_CASE, "core")[0] == before[0]
    assert f"{CASE}('bindings') at" not in skipped.stderr  # measured again: nothing to keep


def test_an_environment_that_lost_its_bindings_does_not_install_and_measures_nothing(project):
    """An environment whose build cache lacks the bindings it was built with (as the build before this one left it)
    fails to install, naming what is missing, and the results file keeps what was measured."""
    conf, env, _, results, _, _ = project
    (cached,) = [p for p in (conf.parent / "env").glob("*/asv-build-cache/*/wheels") if p.is_dir()]
    for wheel in cached.glob("cuda_bindings-*.whl"):
        wheel.unlink()
    (results_file,) = result_files(results)
    before = results_file.read_text()
    installed_elsewhere(conf)
    broken = asv(conf, "run", "-b", CASE, "--machine", "cpu-test", "--show-stderr", "HEAD^!", env=env)
    assert broken.returncode != 0
    assert f"cuda-bindings {BINDINGS} wanted, none installed" in broken.stdout + broken.stderr
    assert results_file.read_text() == before


def test_the_suite_calls_a_library_that_is_not_what_the_build_installed_broken(newest_env):
    """benchmarks/_compat.py reads what the environment's build installed: a listed library that does not import,
    or another version of it, fails every case of it (BrokenEnvironment); what the record does not list skips.
    In a real environment with cuda-core and cuda-bindings."""
    probe = """if True:
        import json, importlib.metadata as m
        from benchmarks import _compat
        core = m.version("cuda-core")
        print(json.dumps([_compat._broken({}), _compat._broken({"cuda-core": core}),
                          _compat._broken({"cuda-core": core, "cuda-bindings": "0.0.1"})]))
    """
    out = subprocess.run([str(newest_env), "-c", probe], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout
    nothing, same, other = json.loads(out.splitlines()[-1])
    assert nothing == {} and same == {}
    assert list(other) == ["bindings"]
    assert "installed cuda-bindings 0.0.1, but cuda-bindings 13." in other["bindings"]
    assert "the environment is broken" in other["bindings"]


def test_asv_compare_with_no_case_measured_on_both_commits_gives_no_verdict(project):
    """`asv compare` (and `asv continuous`, which ends in it) on two commits that share no measured case says so and
    exits 2, never a table of n/a (or, from `asv continuous`, "BENCHMARKS NOT SIGNIFICANTLY CHANGED"); with cases
    measured on both, asv's table as ever."""
    conf, env, repo, results, data, _ = project
    (results_file,) = result_files(results)
    measured = data["commit_hash"]
    failed = git(repo, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "every case failed here")  # no ref moves
    at = data["result_columns"].index("result")
    nothing = json.loads(results_file.read_text())
    nothing["commit_hash"] = failed
    for row in nothing["results"].values():
        row[at] = None if row[at] is None else [None] * len(row[at])
    copy = results / results_file.name.replace(measured[:8], failed[:8])
    copy.write_text(json.dumps(nothing))
    try:
        none = asv(conf, "compare", measured, failed, "--machine", "cpu-test", env=env)
        same = asv(conf, "compare", measured, measured, "--machine", "cpu-test", env=env)
    finally:
        copy.unlink()
    assert none.returncode == 2, none.stdout[-3000:] + none.stderr[-3000:]
    assert (f"no case has a measured value at both {measured[:9]} and {failed[:9]} (every one skipped or failed, or "
            "not run): nothing to compare") in none.stderr
    assert "All benchmarks" not in none.stdout
    assert same.returncode == 0 and "All benchmarks" in same.stdout, same.stderr[-3000:]
    assert f"{CORE_CASE}('core')" in same.stdout


SLOW_CORE = """import os, pathlib, time
from setuptools import setup
pathlib.Path(os.environ["CUDA_BENCH_TEST_MARKER"]).write_text("in pip wheel")
time.sleep(120)
setup()
"""


def test_asv_run_interrupted_in_a_build_says_one_line_and_exits_130(project):
    """Ctrl-C while asv's build step compiles (a commit whose cuda_core builds slowly): `asv run` stops within
    seconds with exit status 130 and one line, not asv's KeyboardInterrupt traceback; the build's record says it
    was stopped."""

    conf, env, repo, _, _, _ = project
    git(repo, "checkout", "-q", "-b", "slow")
    (repo / "cuda_core" / "setup.py").write_text(SLOW_CORE)
    (repo / "cuda_core" / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "cuda-core"\nversion = "0.0.1"\n')
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a cuda_core that builds slowly")
    slow = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    marker = conf.parent / "in-pip-wheel"
    code, out, err, took = ctrl_c_when(marker, [sys.executable, "-m", "asv", "run", "-b", CASE, "--machine",
                                                "cpu-test", f"{slow}^!", "--config", str(conf)], wait=400,
                                       cwd=conf.parent, env=dict(env, CUDA_BENCH_TEST_MARKER=str(marker)))
    said = out + err
    assert code == 130 and took < 20, (code, took, said[-3000:])
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said[-3000:]
    told = [line for line in said.splitlines() if line.startswith("cuda-bench:") and "no GPU" not in line]
    assert told == ["cuda-bench: interrupted"], said[-3000:]  # not also "the build of ... failed"
    assert "Interrupted." not in said, said[-3000:]
    (record,) = [json.loads(p.read_text()) for p in (conf.parent / "env").glob("*/asv-build-cache/*/wheels/build.json")
                 if json.loads(p.read_text())["commit"] == slow]
    assert record["ok"] is False and record["error"].startswith("stopped (SIGTERM) after "), record
