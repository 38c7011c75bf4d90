"""Every benchmark resolves its API, or declares it absent with a reason, in every cuda-core release.

Each release is installed from PyPI into its own virtual environment. In each, asv itself discovers and
checks the suite (``asv check``), and ``python -m cuda_bench.run.apis --resolve-only`` lists what every benchmark
resolves to. The skips are compared with the API history of cuda.core (../shared/NOTES.md and the
releases' own namespaces): a benchmark that stops resolving, or resolves where it should not, fails here.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import NEWEST, RELEASES, ROOT, RUNNER, asv_conf, make_env, run_asv, run_module

#: an environment per cuda-core release, real asv: the full suite's lane (-m slow)
pytestmark = pytest.mark.slow

# benchmark -> first release whose cuda.core has it
INTRODUCED = {
    "bench_device.DeviceArch('core')": "0.4.0",  # Device.arch
    "bench_event.EventCreate('core')": "0.2.0",  # Device.create_event
    "bench_event.EventQuery('core')": "0.2.0",  # public Event
    "bench_event.EventSync('core')": "0.2.0",
    "bench_memory.MemoryResourceCreate('core')": "0.3.0",  # public DeviceMemoryResource
    "bench_program.GetKernel('core')": "0.2.0",  # public ObjectCode
    "bench_program.FuncGetAttribute('core')": "0.2.0",  # public ObjectCode (Kernel.attributes: 0.2.0 too)
    "bench_program.ModuleLoad('core')": "0.2.0",
    "bench_program.ProgramOptionsCreate('core')": "0.2.0",  # ProgramOptions
    "bench_program.CompileOptions('core')": "0.2.0",  # ProgramOptions
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
    proc = run_module("cuda_bench.run.apis", "--resolve-only", "--json", out, python=python, check=False)
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



FLAGS = """
import json
from benchmarks import _compat, bench_program
options = _compat.core.ProgramOptions(arch="sm_90", **bench_program.CompileOptions.OPTIONS)
flags = options.as_bytes("nvrtc") if hasattr(options, "as_bytes") else options._as_bytes()
print(json.dumps([f.decode() for f in flags]))
"""


@pytest.mark.parametrize("version", [v for v in sorted(RELEASES, key=_v)
                                     if _v(v) >= _v(INTRODUCED["bench_program.CompileOptions('core')"])])
def test_940s_compile_passes_nvrtc_what_cuda_core_passes_it(version):
    """CompileOptions('bindings') gives NVRTC the flags cuda.core's ProgramOptions makes of #940's options, in
    every release that has them (0.2.0 on): the two forms compile the same way."""
    python = make_env(RELEASES[version] + RUNNER)
    proc = subprocess.run([str(python), "-c", FLAGS], cwd=ROOT, capture_output=True, text=True, check=True)
    from benchmarks import bench_program

    arch, *flags = json.loads(proc.stdout)
    assert arch in ("-arch=sm_90", "--gpu-architecture=sm_90") and tuple(flags) == bench_program.CompileOptions.FLAGS


PACKING = """
import ctypes, importlib, json
from benchmarks.bench_launch import LaunchVoidPointer
from cuda.bindings import driver

def outcome(call):
    try:
        call()
        return "ok"
    except Exception as exc:
        return type(exc).__name__

for module in ("cuda.core._kernel_arg_handler", "cuda.core.experimental._kernel_arg_handler"):
    try:
        holder = importlib.import_module(module).ParamHolder
        break
    except ImportError:
        pass
address = 0x7F0000001000
launch = lambda params: driver.cuLaunchKernel(driver.CUfunction(0), 1, 1, 1, 1, 1, 1, 0, driver.CUstream(0), params, 0)
print(json.dumps({
    "core": outcome(lambda: holder(LaunchVoidPointer.arguments("core", address, 2))),
    "core c_void_p": outcome(lambda: holder((ctypes.c_void_p(address),) * 2)),
    "bindings": outcome(lambda: launch(LaunchVoidPointer.arguments("bindings", address, 2))),
    "bindings str": outcome(lambda: launch((("a", "b"), (ctypes.c_void_p,) * 2))),
}))
"""


def test_1390s_bare_addresses_are_taken_by_every_release(release):
    """LaunchVoidPointer's arguments, packed the way each library packs them before it calls the driver
    (which this machine lacks): cuda.core's ParamHolder takes the ints and rejects a ctypes.c_void_p object
    (why Launch does not pass one), and cuda.bindings' cuLaunchKernel converts ints typed c_void_p without a
    TypeError (here it then reaches the missing driver); a string there is its TypeError (the conversion runs
    first)."""
    version, python = release
    proc = subprocess.run([str(python), "-c", PACKING], cwd=ROOT, capture_output=True, text=True, check=True)
    found = json.loads(proc.stdout)
    assert (found["core"], found["core c_void_p"], found["bindings str"]) == ("ok", "TypeError", "TypeError"), found
    assert found["bindings"] != "TypeError", found  # past the arguments (here, to the missing driver)


def test_a_library_left_out_is_never_imported_and_its_forms_say_so(tmp_path):
    """CUDA_BENCH_LEAVE_OUT=core (what `scripts/bench compare --head-env` gives one side's workers): the suite
    imports, cuda.core never enters the process, every cuda.core form skips with that reason, and every other
    form resolves as it does with cuda.core imported."""
    python = make_env(RELEASES[NEWEST] + RUNNER)
    tables = {}
    for left_out in ("", "core"):
        out = tmp_path / f"apis-{left_out or 'all'}.json"
        run_module("cuda_bench.run.apis", "--resolve-only", "--json", out, python=python,
                   env={**os.environ, "CUDA_BENCH_LEAVE_OUT": left_out})
        rows = json.loads(out.read_text())["rows"]
        tables[left_out] = {row["benchmark"]: (row["api"], row["status"]) for row in rows}
    assert tables[""].keys() == tables["core"].keys()
    assert any(api == "core" and status == "ok (api)" for api, status in tables[""].values())
    for name, (api, status) in tables["core"].items():
        if api == "core":
            assert status.startswith("skip: ") and "left out of this process (CUDA_BENCH_LEAVE_OUT)" in status, name
        else:
            assert status == tables[""][name][1], name
    probe = "import sys, benchmarks._compat as c; print(c.core is None, 'cuda.core' in sys.modules)"
    found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "CUDA_BENCH_LEAVE_OUT": "core", "PYTHONPATH": str(ROOT)})
    assert found.stdout.split() == ["True", "False"], found.stderr


TYPED = """
import ctypes, importlib, json
from benchmarks import _compat, _kernels
from benchmarks.bench_launch import LaunchTyped
from cuda.bindings import driver

def outcome(call):
    try:
        call()
        return "ok"
    except Exception as exc:
        return type(exc).__name__

for module in ("cuda.core._kernel_arg_handler", "cuda.core.experimental._kernel_arg_handler"):
    try:
        holder = importlib.import_module(module).ParamHolder
        break
    except ImportError:
        pass
launch = lambda params: driver.cuLaunchKernel(driver.CUfunction(0), 1, 1, 1, 1, 1, 1, 0, driver.CUstream(0), params, 0)
ptr, host = driver.CUdeviceptr(0), _compat.numpy.zeros(8, _compat.numpy.uint8)
print(json.dumps({
    "core": {case: outcome(lambda: holder(LaunchTyped.arguments("core", case))) for case in _kernels.TYPED_CASES},
    "bindings": {case: outcome(lambda: launch(LaunchTyped.arguments("bindings", case)))
                 for case in _kernels.TYPED_CASES},
    "memcpy": [outcome(lambda: driver.cuMemcpyHtoD(ptr, host, 8)), outcome(lambda: driver.cuMemcpyDtoH(host, ptr, 8))],
    "legacy stream": int(_compat.bindings_legacy_stream()),
}))
"""


def test_2904s_typed_arguments_are_taken_by_every_release(release):
    """LaunchTyped's arguments, packed the way each library packs them before it calls the driver (which this
    machine lacks): cuda.core's ParamHolder takes the numpy scalars of every 512-argument case and rejects the
    struct with a TypeError (the case's skip: cuda.core has no struct by value), and cuda.bindings' cuLaunchKernel
    converts every case, the struct included, without a TypeError (here it then reaches the missing driver). The
    memcpy forms' numpy host arrays pass cuda.bindings' conversion too, and the legacy default stream is 0x1."""
    version, python = release
    proc = subprocess.run([str(python), "-c", TYPED], cwd=ROOT, capture_output=True, text=True, check=True)
    found = json.loads(proc.stdout)
    assert found["core"] == {case: "TypeError" if "struct" in case else "ok" for case in found["core"]}, found
    assert "TypeError" not in found["bindings"].values() and "TypeError" not in found["memcpy"], found
    assert found["legacy stream"] == 1


def test_allocate_and_copy_take_a_stream_keyword(release):
    """AllocFreeStream and MemcpyDtod call ``Device.allocate(size, stream=...)`` and ``Buffer.copy_to(dst,
    stream=...)``: every release's signatures take ``stream`` by keyword (1.x requires it)."""
    version, python = release
    proc = subprocess.run([str(python), "-W", "ignore", "-c", SIGNATURES], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    assert proc.stdout.split() in (["POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY"], ["KEYWORD_ONLY", "KEYWORD_ONLY"])


SIGNATURES = """
import inspect, sys
from benchmarks import _compat as c
c.core.Device.allocate  # the package loads its memory module; Buffer is public from 0.3 only
buffer = next(m.Buffer for name, m in list(sys.modules.items()) if name.startswith("cuda.core")
              and isinstance(getattr(m, "Buffer", None), type) and hasattr(m.Buffer, "copy_to"))
print(*(inspect.signature(f).parameters["stream"].kind.name for f in (c.core.Device.allocate, buffer.copy_to)))
"""


#: cuda-pathfinder releases: none of the lookups (1.2.0), the header lookup (1.3.0, its own cache, the user site
#: searched regardless), the binary lookup and locate_nvidia_header_directory's cache (1.3.4), the static library
#: (1.4.1), the newest
PATHFINDER_RELEASES = ["1.2.0", "1.3.0", "1.3.4", "1.4.1", "1.9.1"]
PATHFINDER_INTRODUCED = {"FindNvidiaHeaderDirectory": "1.3.0", "FindNvidiaBinaryUtility": "1.3.4",
                         "LocateStaticLib": "1.4.1"}


@pytest.mark.parametrize("version", PATHFINDER_RELEASES)
def test_pathfinder_lookups_run_or_say_why(version, tmp_path):
    """cuda.pathfinder's forms, run for real (they need no GPU) with each release alone: a lookup the release has
    runs its setup (the tree, a cold lookup that finds the component in it) and one timed call; one it lacks skips
    with the name it lacks."""
    python = make_env([f"cuda-pathfinder=={version}", *RUNNER])
    out = tmp_path / "apis.json"
    proc = run_module("cuda_bench.run.apis", "--json", out, python=python, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = [row for row in json.loads(out.read_text())["rows"] if row["api"] == "pathfinder"]
    rows = [row for row in found if row["benchmark"].startswith("bench_pathfinder.")]  # the lookups
    assert {row["benchmark"].split(".")[1] for row in rows} == set(PATHFINDER_INTRODUCED)
    # and its cold start: importing it runs with every release
    (imported,) = [row for row in found if row["benchmark"].startswith("bench_coldstart.Import.")]
    assert imported["status"] == "ok", imported
    for row in rows:
        first = PATHFINDER_INTRODUCED[row["benchmark"].split(".")[1]]
        if _v(version) >= _v(first):
            assert row["status"] == "ok", row
        else:
            assert row["status"].startswith("skip: pathfinder.")
            assert f"cuda.pathfinder {version} has no" in row["status"]


COLD = """
import json, site
from benchmarks import _compat, bench_pathfinder

def look(fn):
    try:
        found = fn()
    except Exception as exc:  # locate_static_lib raises where it finds nothing
        return type(exc).__name__
    return str(getattr(found, "abs_path", found))

before = (site.getsitepackages, site.getusersitepackages, site.ENABLE_USER_SITE)
found = {}
for cls in (bench_pathfinder.FindNvidiaHeaderDirectory, bench_pathfinder.FindNvidiaBinaryUtility,
            bench_pathfinder.LocateStaticLib):
    op = cls()
    try:
        op.setup("pathfinder", "3")
    except _compat.Unavailable:  # a lookup this release lacks
        continue
    try:
        first = look(op.fn)
        op.target.unlink()
        found[cls.__name__] = [first, look(op.fn), str(op.target)]
    finally:
        op.teardown("pathfinder", "3")
    assert (site.getsitepackages, site.getusersitepackages, site.ENABLE_USER_SITE) == before
print(json.dumps(found))
"""


@pytest.mark.parametrize("version", ["1.3.0", "1.9.1"])
def test_pathfinder_lookups_are_timed_cold(version):
    """Each timed call looks again: once the component is gone from the tree, the next call no longer finds it
    there (a cached lookup would return the first answer), with the release whose header lookup is cached
    itself (1.3.0) and the newest. Teardown gives ``site`` back as it was."""
    python = make_env([f"cuda-pathfinder=={version}", *RUNNER])
    proc = subprocess.run([str(python), "-c", COLD], cwd=ROOT, capture_output=True, text=True, check=True)
    found = json.loads(proc.stdout)
    assert "FindNvidiaHeaderDirectory" in found and (len(found) == 3) == (version == "1.9.1"), found
    for name, (first, second, target) in found.items():
        assert target.startswith(first) and not second.startswith(first), (name, first, second)
