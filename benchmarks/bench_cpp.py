"""C++ twins: the suite's driver-level operations called from C++, the floor Python is measured against.

``cpp/twins.cpp`` makes the same driver/runtime/NVRTC calls as the ``bindings`` forms of the operations
in the other modules. It is compiled with nvcc on the benchmark machine when asv runs (no binaries in
git), run once (``setup_cache``), and each operation's per-call median is recorded as a ``track_``
benchmark in seconds, in the same results file as the Python numbers. Operation IDs are the Python
class names in snake case, with the case in brackets: ``Launch('core', '16 ptr')`` <-> ``launch[16 ptr]``.
C++ passes kernel arguments pre-packed, so ``launch[...]`` is also the twin of ``LaunchPrepacked``.
"""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import _compat as compat
from . import _kernels as kernels

SOURCE = Path(__file__).with_name("cpp") / "twins.cpp"

OPS = [
    "current_device", "runtime_get_device", "compute_capability", "current_compute_capability",
    "device_attribute", "set_current", "current_context", "device_sync", "driver_version", "runtime_version",
    "stream_create", "stream_sync", "event_create", "event_record", "event_query", "event_sync",
    "alloc_free", "alloc_free_sync", "pointer_get_attribute", "pointer_get_attributes",
    "get_kernel", "module_load", "module_load_legacy",
    *(f"launch[{case}]" for case in kernels.ARG_CASES),
    "compile[ptx]", "compile[cubin]", "nvrtc_create_program_100_headers", "tensor_map_encode_tiled",
]


def nvcc():
    for candidate in (
        shutil.which("nvcc"),
        *(os.path.join(os.environ[v], "bin", "nvcc") for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)),
        "/usr/local/cuda/bin/nvcc",
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def build_and_run():
    """Compile twins.cpp, run it on this GPU; {"results": {op: s}, "skipped": {op: why}} or {"error": why}."""
    if not compat.has_gpu():
        try:
            compat.require_gpu()
        except compat.Unavailable as exc:
            return {"error": str(exc)}
    compiler = nvcc()
    if compiler is None:
        return {"error": "no nvcc here (PATH, CUDA_HOME, /usr/local/cuda) to build the C++ twins"}
    work = Path(tempfile.mkdtemp(prefix="cpp-twins-"))
    try:
        binary = work / "twins"
        build = subprocess.run(
            [compiler, "-std=c++17", "-O2", str(SOURCE), "-o", str(binary), "-lcuda", "-lnvrtc"],
            capture_output=True, text=True,
        )
        if build.returncode != 0:
            raise RuntimeError(f"building {SOURCE.name} failed:\n{build.stderr[-3000:]}")
        cubin = work / "kernels.cubin"
        cubin.write_bytes(kernels.cubin())
        proc = subprocess.run([str(binary), str(cubin)], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"{SOURCE.name} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
        return json.loads(proc.stdout)
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Cpp:
    """Per-call latency of each operation from C++ (median over 25 timed batches)."""

    params = [OPS]
    param_names = ["op"]
    unit = "seconds"
    timeout = 900

    def setup_cache(self):
        return build_and_run()

    def setup(self, measured, op):
        if "error" in measured:
            raise compat.Unavailable(measured["error"])
        if op in measured["skipped"]:
            raise compat.Unavailable(measured["skipped"][op])
        if op not in measured["results"]:
            raise RuntimeError(f"{SOURCE.name} measured no {op!r}")

    def track_latency(self, measured, op):
        return measured["results"][op]
