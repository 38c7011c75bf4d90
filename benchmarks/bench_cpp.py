"""C++ twins: the suite's driver-level operations called from C++, the floor Python is measured against.

``cpp/twins.cpp`` makes the same driver/runtime/NVRTC calls as the ``bindings`` forms of the operations in
the other modules. It is compiled with nvcc on the benchmark machine into a shared library (no binaries
in git; cached by the source's hash) and loaded with ctypes into the Python process, so that a C++ twin
and a Python form can be timed alternately, sample by sample, in one process (``cuda_bench.run.worker``'s
``overhead`` request). NVRTC is the one cuda.bindings loaded in that process, so both sides compile with
the same compiler. Operation IDs are the Python class names in snake case, with the case in brackets:
``Launch('core', '16 ptr')`` <-> ``launch[16 ptr]`` (``cuda_bench.foundations.names.cpp_id``).

``FirstContext`` is the C++ twin of a cold start (``bench_coldstart.FirstContext``): a program of its own
(``cpp/coldstart.cpp``, built with the machine's C++ compiler), started fresh for every sample.

For asv, ``Cpp.track_latency`` records each twin's per-call median over 25 samples, in seconds, in the
same results file as the Python numbers.
"""

import ctypes
import functools
import hashlib
import inspect
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from . import _coldstart as coldstart
from . import _compat as compat
from . import _kernels as kernels

SOURCE = Path(__file__).with_name("cpp") / "twins.cpp"
SAMPLES = 25
TARGET_NS = 200_000  # length of one sample
CACHE = Path(os.environ.get("CUDA_BENCH_CACHE", Path.home() / ".cache" / "cuda-python-bench")) / "twins"

OPS = [
    "current_device", "runtime_get_device", "compute_capability", "current_compute_capability",
    "device_attribute", "set_current", "current_context", "device_sync", "driver_version", "runtime_version",
    "stream_create", "stream_sync", "event_create", "event_record", "event_query", "event_sync",
    "alloc_free", "alloc_free_sync[keep]", "alloc_free_sync[release]", "pointer_get_attribute",
    "pointer_get_attributes", "get_kernel", "module_load", "module_load_legacy",
    *(f"launch[{case}]" for case in kernels.ARG_CASES),
    "compile[ptx]", "compile[cubin]", "nvrtc_create_program_100_headers", "tensor_map_encode_tiled",
    # cuda-python's own benchmarks that the list above did not have
    "device_get", "device_primary_ctx_retain", "stream_query", "alloc_free_stream[default]",
    "alloc_free_stream[explicit]", "memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "func_get_attribute",
    "nvrtc_create_program", *(f"launch_typed[{case}]" for case in kernels.TYPED_CASES),
    "tensor_map_encode_im_2col", "tensor_map_encode_im_2col_wide",
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


FLAGS = ["-std=c++17", "-O2", "-Xcompiler", "-fPIC"]  # nvcc's, for the twins' shared library


def build():
    """The twins' shared library for this source and nvcc, compiled on first use (then cached)."""
    compiler = nvcc()
    if compiler is None:
        raise compat.Unavailable("no nvcc here (PATH, CUDA_HOME, /usr/local/cuda) to build the C++ twins")
    key = hashlib.sha256(SOURCE.read_bytes() + os.path.realpath(compiler).encode()).hexdigest()[:16]
    target = CACHE / f"twins-{key}.so"
    if not target.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=CACHE) as work:
            out = Path(work) / target.name
            proc = subprocess.run(
                [compiler, *FLAGS, "-shared", str(SOURCE), "-o", str(out), "-lcuda", "-ldl"],
                capture_output=True, text=True,
            )
            if proc.returncode != 0:
                raise RuntimeError(f"building {SOURCE.name} failed:\n{proc.stderr[-3000:]}")
            os.replace(out, target)  # atomic: concurrent builders agree
    return target


def loaded_nvrtc():
    """The path of the libnvrtc cuda.bindings has loaded in this process ('' when none is)."""
    compat.nvrtc.nvrtcVersion()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "libnvrtc.so" in os.path.basename(path):
                return path
    return ""


class Twins:
    """The twins' library, initialised in this process (device 0's primary context, the suite's kernels and its
    typed-argument kernels)."""

    def __init__(self):
        compat.primary_context()
        self.lib = ctypes.CDLL(str(build()))
        self.lib.twins_init.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.c_size_t]
        self.lib.twins_load_typed.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
        self.lib.twins_setup.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        self.lib.twins_ids.restype = ctypes.c_char_p
        self.lib.twins_queued.restype = ctypes.c_long
        self.lib.twins_sample.argtypes = [ctypes.c_long]
        self.lib.twins_sample.restype = ctypes.c_double
        self.sample = self.lib.twins_sample
        self.teardown = self.lib.twins_teardown
        cubin = kernels.cubin()
        err = ctypes.create_string_buffer(2048)
        if self.lib.twins_init(cubin, len(cubin), loaded_nvrtc().encode(), err, len(err)):
            raise compat.Unavailable(f"the C++ twins could not start: {err.value.decode()}")
        typed = kernels.typed_cubin()
        self.lib.twins_load_typed(typed, len(typed), err, len(err))  # where it fails, launch_typed[...] skip with why
        self.ids = self.lib.twins_ids().decode().split(",")

    def setup(self, op):
        """Calls per sample for a queued twin (else 0); raises Unavailable with the twin's reason."""
        err = ctypes.create_string_buffer(2048)
        status = self.lib.twins_setup(op.encode(), err, len(err))
        if status == 1:
            raise compat.Unavailable(err.value.decode())
        if status:
            raise RuntimeError(err.value.decode())
        return self.lib.twins_queued()


@functools.cache
def twins():
    return Twins()


def calls_for(sample, target_ns=TARGET_NS):
    """Calls per sample so that one sample lasts about ``target_ns``."""
    calls = 1
    while calls < (1 << 24):
        elapsed = sample(calls)
        if elapsed >= target_ns:
            break
        calls = max(2 * calls, int(calls * target_ns / max(elapsed, 1) * 1.1))
    return calls


def measure_all():
    """Each twin's per-call median, {"results": {op: s}, "skipped": {op: why}}, or {"error": why}."""
    try:
        compat.require_gpu()
        lib = twins()
    except compat.Unavailable as exc:
        return {"error": str(exc)}
    results, skipped = {}, {}
    for op in OPS:
        try:
            calls = lib.setup(op) or calls_for(lib.sample)
            results[op] = statistics.median(lib.sample(calls) / calls for _ in range(SAMPLES)) * 1e-9
        except compat.Unavailable as exc:
            skipped[op] = str(exc)
        finally:
            lib.teardown()
    return {"results": results, "skipped": skipped}


class Cpp:
    """Per-call latency of each operation from C++ (median over 25 timed samples)."""

    params = [OPS]
    param_names = ["op"]
    unit = "seconds"
    timeout = 900

    def setup_cache(self):
        return measure_all()

    def setup(self, measured, op):
        if "error" in measured:
            raise compat.Unavailable(measured["error"])
        if op in measured["skipped"]:
            raise compat.Unavailable(measured["skipped"][op])
        if op not in measured["results"]:
            raise RuntimeError(f"{SOURCE.name} measured no {op!r}")

    def track_latency(self, measured, op):
        return measured["results"][op]


# asv versions a benchmark by the source of its timed method and setup; the twins are the benchmark here: a
# change to twins.cpp, its flags or how the twins are timed starts a new version, so C++ numbers of other
# twins are never graphed or compared with these (reading the source does no GPU work).
Cpp.version = hashlib.sha256("".join([
    inspect.getsource(Cpp), inspect.getsource(measure_all), inspect.getsource(calls_for), SOURCE.read_text(),
    " ".join(FLAGS), f"samples={SAMPLES} target_ns={TARGET_NS}",
]).encode()).hexdigest()[:16]


class FirstContext:
    """The C++ twin of ``bench_coldstart.FirstContext``: a fresh process that loads the driver, initialises it and
    makes device 0's primary context current (``cpp/coldstart.cpp``), net of the same program doing nothing. A
    control, as every C++ twin: it runs no cuda-python code."""

    params = [["cpp"]]  # as the Python forms' api: bench_cpp.FirstContext.time_first_context('cpp')
    param_names = ["api"]
    gpu_free = ()  # its program makes a context: it skips without a GPU (suite.needs_gpu reads this)
    processes = 1
    unroll = 1
    number = 1
    repeat = (3, 10, 20.0)
    warmup_time = 0
    timeout = 300
    timer = staticmethod(coldstart.net_clock)
    clock_ns = staticmethod(coldstart.net_clock_ns)

    def setup(self, api):
        compat.require_gpu()
        program = str(coldstart.cpp_program())
        argv, empty, env = [program], [program, "pass"], coldstart.child_env()
        self.body = lambda: coldstart.net_sample(argv, empty, env, first_context=True)

    def time_first_context(self, api):
        self.body()


FirstContext.version = hashlib.sha256(
    (inspect.getsource(FirstContext) + inspect.getsource(coldstart) + coldstart.CPP_SOURCE.read_text()).encode()
).hexdigest()[:16]
