"""scripts/bench.py: the derived configuration that points asv at a clone, a wheel or a system site
without editing asv.conf.json, and the machine record asv copies into every results file."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

import json5

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import bench  # noqa: E402


def test_derived_config_overrides_only_what_was_asked(tmp_path, git_repo):
    site = tmp_path / "site"
    site.mkdir()
    args = argparse.Namespace(repo=str(git_repo), bindings="source", system_site=str(site))
    conf = json.loads(bench.derived_conf(args).read_text())
    original = json5.loads((ROOT / "asv.conf.json").read_text())
    assert conf["repo"] == str(git_repo)
    assert conf["matrix"]["env"]["CUDA_BENCH_BINDINGS"] == ["source"]
    assert conf["matrix"]["env"]["CUDA_BENCH_SYSTEM_SITE"] == [str(site)]
    assert "cupy-cuda13x" not in conf["matrix"]["req"] and "numpy" not in conf["matrix"]["req"]
    assert conf["matrix"]["req"]["pip+asv_runner"] == ["0.2.5"]
    # paths still mean what they mean in asv.conf.json, wherever the derived file lives
    assert conf["benchmark_dir"] == str(ROOT / "benchmarks")
    assert all(str(ROOT / "scripts") in cmd for cmd in conf["build_command"] + conf["install_command"])
    assert conf["regressions_thresholds"] == original["regressions_thresholds"]
    assert json5.loads((ROOT / "asv.conf.json").read_text()) == original  # the file itself is untouched


def test_defaults_keep_the_project_config(tmp_path):
    args = argparse.Namespace(repo=None, bindings=None, system_site=None)
    conf = json.loads(bench.derived_conf(args).read_text())
    original = json5.loads((ROOT / "asv.conf.json").read_text())
    assert conf["repo"] == original["repo"] == "https://github.com/NVIDIA/cuda-python.git"
    assert conf["matrix"] == original["matrix"]


def test_a_path_that_is_not_a_repository_is_a_clear_error(tmp_path, capsys):
    args = argparse.Namespace(repo=str(tmp_path), bindings=None, system_site=None)
    try:
        bench.derived_conf(args)
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("no error")
    assert "is not a git repository" in capsys.readouterr().err


def test_machine_record_has_gpu_fields_only_from_a_gpu(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # asv keeps its machine file in ~/.asv-machine.json
    name = bench.record_machine()
    saved = json.loads((tmp_path / ".asv-machine.json").read_text())[name]
    assert saved["machine"] == name and saved["num_cpu"] and saved["cpu"]
    if shutil.which("nvidia-smi"):
        assert saved["gpu"] and saved["driver"] and name == bench.default_machine_name(saved)
    else:  # no GPU fields are invented
        assert name.startswith("cpu-") and "gpu" not in saved


PROBE = '''
import os


def track_aslr_off():
    with open("/proc/self/personality") as f:
        return int(int(f.read(), 16) & 0x0040000 != 0)  # ADDR_NO_RANDOMIZE


def track_hash_seed():
    return int(os.environ.get("PYTHONHASHSEED", "-1"))


def track_pinned_core():
    cores = os.sched_getaffinity(0)
    return cores.pop() if len(cores) == 1 else -1
'''


def test_timed_asv_runs_benchmarks_pinned_without_aslr_and_with_a_fixed_hash_seed(tmp_path, git_repo, newest_env,
                                                                                   monkeypatch):
    from conftest import asv_conf, asv_results, git

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "__init__.py").write_text("")
    (tmp_path / "probe" / "bench_probe.py").write_text(PROBE)
    conf = asv_conf(tmp_path, git_repo, newest_env, benchmark_dir=str(tmp_path / "probe"))
    assert bench.asv("machine", "--yes", "--machine", "probe", config=conf) == 0
    core = sorted(os.sched_getaffinity(0))[-1]
    status = bench.asv("run", "--quick", "--machine", "probe", "--set-commit-hash", git(git_repo, "rev-parse", "HEAD"),
                       "-E", f"existing:{newest_env}", config=conf, timed=True, affinity=str(core))
    assert status == 0
    (results,) = [p for p in (tmp_path / "results" / "probe").glob("*.json") if p.name != "machine.json"]
    seen = {name.split(".")[-1]: value[0] for (name, _), value in asv_results(results).items()}
    assert seen["track_hash_seed"] == 0
    assert seen["track_pinned_core"] == core
    # setarch -R where the kernel allows it (bench.no_aslr_prefix probes); said plainly where not
    assert seen["track_aslr_off"] == (1 if bench.no_aslr_prefix() else 0)


def test_cpu_affinity_choices():
    assert bench.cpu_affinity("none") == [] and bench.cpu_affinity(None) == []
    assert bench.cpu_affinity("3,4") == ["--cpu-affinity", "3,4"]
    cores = sorted(os.sched_getaffinity(0))
    assert bench.cpu_affinity("auto") == (["--cpu-affinity", str(cores[-1])] if len(cores) >= 4 else [])
