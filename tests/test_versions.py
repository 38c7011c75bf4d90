"""Every benchmark resolves its API, or declares it absent with a reason, in every cuda-core release.

Each release is installed from PyPI into its own virtual environment. In each, asv itself discovers and
checks the suite (``asv check``), and ``python -m cuda_bench.apis --resolve-only`` lists what every benchmark
resolves to. The skips are compared with the API history of cuda.core (../shared/NOTES.md and the
releases' own namespaces): a benchmark that stops resolving, or resolves where it should not, fails here.
"""

from __future__ import annotations

import json

import pytest

from conftest import RELEASES, RUNNER, asv_conf, make_env, run_asv, run_module

# benchmark -> first release whose cuda.core has it
INTRODUCED = {
    "bench_device.DeviceArch('core')": "0.4.0",  # Device.arch
    "bench_event.EventCreate('core')": "0.2.0",  # Device.create_event
    "bench_event.EventQuery('core')": "0.2.0",  # public Event
    "bench_event.EventSync('core')": "0.2.0",
    "bench_memory.MemoryResourceCreate('core')": "0.3.0",  # public DeviceMemoryResource
    "bench_program.GetKernel('core')": "0.2.0",  # public ObjectCode
    "bench_program.ModuleLoad('core')": "0.2.0",
    "bench_program.ProgramOptionsCreate('core')": "0.2.0",  # ProgramOptions
    "bench_tensormap.TensorMapEncodeTiled('core')": "0.7.0",  # StridedMemoryView.as_tensor_map
}


def _v(text):
    return tuple(int(x) for x in text.split("."))


@pytest.fixture(scope="module", params=sorted(RELEASES, key=_v))
def release(request):
    return request.param, make_env(RELEASES[request.param] + RUNNER)


def test_asv_discovers_and_checks_the_suite(release, tmp_path, git_repo):
    version, python = release
    conf = asv_conf(tmp_path, git_repo, python)
    proc = run_asv(conf, "check", "-E", f"existing:{python}")
    assert "Traceback" not in proc.stdout + proc.stderr


def test_every_benchmark_resolves_or_says_why(release, tmp_path):
    version, python = release
    out = tmp_path / "apis.json"
    proc = run_module("cuda_bench.apis", "--resolve-only", "--json", out, python=python, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = json.loads(out.read_text())
    assert table["versions"]["core"] == f"cuda.core {version}"
    skipped = set()
    for row in table["rows"]:
        status = row["status"]
        assert status == "ok (api)" or status.startswith("skip: "), row
        if "CuPy is not importable" in status:  # CuPy is not installed in these environments
            continue
        assert row["api"] != "cupy", row
        if status != "ok (api)":
            # the reason names the library and version that lacks the API
            assert f"cuda.core {version} has no" in status, row
            benchmark, case = row["benchmark"].split("(", 1)
            skipped.add(f"{benchmark.rsplit('.', 1)[0]}({case}")  # bench_x.Class('core')
    expected = {name for name, first in INTRODUCED.items() if _v(version) < _v(first)}
    assert skipped == expected
