"""The suite under real asv on a machine without a GPU: what can run there runs, the rest is skipped.

Uses cuda-core[cu13] (the newest release, with NVRTC) from PyPI in an environment asv treats as existing.
"""

from __future__ import annotations

import math

from conftest import asv_conf, asv_results, git, run_asv

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
}


def results_by_case(results_file):
    """{"module.Class.method('core', 'x')": value} from an asv results file."""
    return {f"{name}({', '.join(map(repr, combo))})": value for (name, combo), value in asv_results(results_file).items()}


def test_cpu_subset_runs_and_gpu_benchmarks_skip(tmp_path, git_repo, newest_env):
    conf = asv_conf(tmp_path, git_repo, newest_env)
    run_asv(conf, "machine", "--yes", "--machine", "cpu-test")
    commit = git(git_repo, "rev-parse", "HEAD")
    run_asv(conf, "run", "--quick", "--machine", "cpu-test", "--set-commit-hash", commit,
            "-E", f"existing:{newest_env}")
    (results_file,) = [p for p in (tmp_path / "results" / "cpu-test").glob("*.json") if p.name != "machine.json"]
    results = results_by_case(results_file)

    assert RUNS_WITHOUT_GPU <= results.keys()
    failed = sorted(name for name, value in results.items() if value is None)
    assert failed == [], f"failed, not skipped: {failed}"
    ran = {name for name, value in results.items() if not math.isnan(value)}
    assert ran == RUNS_WITHOUT_GPU
    for name in ran:
        assert 0 < results[name] < 1.0, (name, results[name])
