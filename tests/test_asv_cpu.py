"""The suite under real asv on a machine without a GPU: what can run there runs, the rest is skipped.

Uses cuda-core[cu13] (the newest release, with NVRTC) from PyPI in an environment asv treats as existing.
"""

from __future__ import annotations

import json
import math
import os
import subprocess

import pytest
from conftest import ROOT, asv_conf, asv_results, git, run_asv

from cuda_bench.foundations.names import is_cold_start
from cuda_bench.foundations.paths import result_files

#: real asv on an environment with cuda-core from PyPI: the full suite's lane
pytestmark = pytest.mark.slow

# what needs no GPU with cuda-core >= 0.7 (its LaunchConfig and cubin compile no longer load libcuda)
RUNS_WITHOUT_GPU = {
    "bench_harness.Floor.time_noop('noop')",
    "bench_enum.ResultFromValue.time_result_from_value('bindings')",
    "bench_enum.ResultMember.time_result_member('bindings')",
    "bench_enum.RuntimeVersion.time_runtime_version('bindings')",
    "bench_launch.LaunchConfigCreate.time_launch_config_create('core')",
    "bench_program.Compile.time_compile('core', 'cubin')",
    "bench_program.Compile.time_compile('bindings', 'ptx')",
    "bench_program.Compile.time_compile('bindings', 'cubin')",
    "bench_program.NvrtcCreateProgram100Headers.time_nvrtc_create_program_100_headers('bindings')",
    "bench_enum.ResultFromErrorValue.time_result_from_error_value('bindings')",
    "bench_program.ProgramOptionsCreate.time_program_options_create('core')",
    "bench_program.CompileOptions.time_compile_options('bindings')",
    "bench_enum.BindingVersion.time_binding_version('core')",
    "bench_enum.DeviceAttributeFromValue.time_device_attribute_from_value('bindings')",
    "bench_program.NvrtcCreateProgram.time_nvrtc_create_program('core')",
    "bench_program.NvrtcCreateProgram.time_nvrtc_create_program('bindings')",
    # cuda.pathfinder's discovery, in a tree setup makes (the newest cuda-pathfinder, a dependency of cuda-core[cu13])
    *(f"bench_pathfinder.FindNvidiaHeaderDirectory.time_find_nvidia_header_directory('pathfinder', '{n}')"
      for n in (1, 3)),
    *(f"bench_pathfinder.FindNvidiaBinaryUtility.time_find_nvidia_binary_utility('pathfinder', '{n}')" for n in (1, 3)),
    "bench_pathfinder.LocateStaticLib.time_locate_static_lib('pathfinder', '3')",
    # cold starts: a fresh interpreter's import, net of `python -c pass`, on the cases' own clock (asv's timer)
    *(f"bench_coldstart.Import.time_import('{api}')" for api in ("pathfinder", "bindings", "core")),
    # as many threads as this machine has cores (asv leaves benchmarks unpinned on fewer than 4)
    *(f"bench_program.CompileThreads.time_compile_threads('{api}', '{n}')" for api in ("core", "bindings")
      for n in (1, 2, 4, 8) if n <= len(os.sched_getaffinity(0))),
}


def results_by_case(results_file):
    """{"module.Class.method('core', 'x')": value} from an asv results file."""
    return {f"{name}({', '.join(map(repr, combo))})": value
            for (name, combo), value in asv_results(results_file).items()}


def test_cpu_subset_runs_and_gpu_benchmarks_skip(tmp_path, git_repo, newest_env):
    conf = asv_conf(tmp_path, git_repo, newest_env)
    run_asv(conf, "machine", "--yes", "--machine", "cpu-test")
    commit = git(git_repo, "rev-parse", "HEAD")
    run_asv(conf, "run", "--quick", "--machine", "cpu-test", "--set-commit-hash", commit,
            "-E", f"existing:{newest_env}")
    # no GPU here: the results go beside asv's environments, never into the configured results folder
    assert not (tmp_path / "results" / "cpu-test").exists()
    (results_file,) = result_files(tmp_path / "results-no-gpu" / "cpu-test")
    results = results_by_case(results_file)

    assert RUNS_WITHOUT_GPU <= results.keys()
    failed = sorted(name for name, value in results.items() if value is None)
    assert failed == [], f"failed, not skipped: {failed}"
    ran = {name for name, value in results.items() if not math.isnan(value)}
    assert ran == RUNS_WITHOUT_GPU
    for name in ran:  # a cold start is a fresh interpreter's import: longer than a call, never a minute
        assert 0 < results[name] < (60.0 if is_cold_start(name) else 1.0), (name, results[name])


def test_the_build_step_brings_nvrtc_so_compilation_runs_without_a_gpu(tmp_path):
    """The plain cuda-bindings wheel has no NVRTC: an environment that the build step made gets it
    (wheels.install_nvrtc), so the NVRTC benchmarks run on a machine without a GPU instead of skipping."""
    import venv

    from conftest import run_module

    venv.create(tmp_path / "env", with_pip=True)
    python = tmp_path / "env" / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "cuda-bindings==13.3.1",
                    "numpy"], check=True)
    before = run_module("cuda_bench.run.apis", "--json", tmp_path / "before.json", python=python, check=False)
    status = {r["benchmark"]: r["status"] for r in json.loads((tmp_path / "before.json").read_text())["rows"]}
    nvrtc = "bench_program.NvrtcCreateProgram100Headers.time_nvrtc_create_program_100_headers('bindings')"
    assert status[nvrtc].startswith("skip"), before.stdout  # what the plain wheel gives
    probe = ("import json, sys; from cuda_bench.build.wheels import install_nvrtc; r = {}; "
             "install_nvrtc(None, '13.3.1', r); print(json.dumps(r))")
    # cuda_bench.build.environment runs inside benchmark environments: it needs nothing but the standard library there
    assert "usage" in run_module("cuda_bench.build", python=python, check=False).stderr
    record = json.loads(subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True,
                                       env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout.splitlines()[-1])
    assert record["nvrtc"] == "cuda-toolkit[nvrtc]==13.*"
    run_module("cuda_bench.run.apis", "--json", tmp_path / "after.json", python=python)
    status = {r["benchmark"]: r["status"] for r in json.loads((tmp_path / "after.json").read_text())["rows"]}
    assert status[nvrtc] == "ok"
    assert status["bench_program.Compile.time_compile('bindings', 'cubin')"] == "ok"
