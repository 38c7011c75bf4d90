"""The one compatibility layer: what cuda.core, cuda.bindings, CuPy and cuda.pathfinder offer in this environment.

Every benchmark module imports this module and nothing version-specific of its own. It absorbs the API
changes of cuda.core from 0.1 (Nov 2024) to today, of cuda.bindings from the ``cuda.cuda`` days on and of
cuda.pathfinder from 1.0,
so the suite imports and runs at any commit that asv checks out. It detects features, never version
numbers: a cuda-core built from a commit without release tags reports a made-up version.

Rules kept here:

* Importing this module does no CUDA work (no ``cuInit``, no ``Device()``): asv imports every benchmark
  module to discover the suite, on machines with and without a GPU.
* Anything that is missing becomes ``None`` or an :class:`Unavailable` with a reason, never a NameError.
  ``Unavailable`` subclasses ``NotImplementedError``, which asv records as a skip.
* GPU state (the device, the primary context, compiled modules) is created on first use and cached for
  the life of the benchmark process.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import warnings
from operator import attrgetter


class Unavailable(NotImplementedError):
    """What a benchmark needs is absent here: asv records the benchmark as skipped, with this reason."""


class BrokenEnvironment(RuntimeError):
    """The environment lacks a library its build installed, or holds another version of it: asv records the
    benchmark as failed, never as skipped, so a broken environment cannot pass for an API that is missing."""


def _import(name):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # cuda.core.experimental in 0.5-0.x
            return importlib.import_module(name)
    except ImportError:
        return None


def _dist_version(*names):
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


# --- cuda.core ------------------------------------------------------------------------------------
# 0.1-0.4: everything lives in cuda.core.experimental; 0.5: moved to cuda.core (experimental kept as a
# deprecated alias); 1.0: experimental removed.
# The name is kept apart from the module: a wheel's cuda.core copies its cu12/cu13 subpackage's globals into its
# own, ``__name__`` included, so ``cuda.core.__name__`` can read "cuda.core.cu13".
def _find_core():
    for name in ("cuda.core", "cuda.core.experimental"):
        module = _import(name)
        if module is not None and hasattr(module, "Device"):
            return module, _import(f"{name}.utils"), name
    return None, None, None


#: libraries this process leaves unimported (``CUDA_BENCH_LEAVE_OUT=core,cupy``): their forms skip. A diagnostic
#: for the paired engine (``scripts/bench compare A A --head-env CUDA_BENCH_LEAVE_OUT=core``): does having
#: another library in the process move a library's numbers? (docs/method.md, rule 6)
LEFT_OUT = frozenset(filter(None, os.environ.get("CUDA_BENCH_LEAVE_OUT", "").split(",")))

#: CORE_MODULE: the name ``core`` is imported by, as a fresh process imports it (``bench_coldstart``)
core, core_utils, CORE_MODULE = (None, None, None) if "core" in LEFT_OUT else _find_core()
CORE_VERSION = _dist_version("cuda-core") if core is not None else None

# --- cuda.bindings ----------------------------------------------------------------------------------
# cuda-python <= 12.6.0 shipped the same modules as cuda.cuda / cuda.cudart / cuda.nvrtc.
driver = _import("cuda.bindings.driver") or _import("cuda.cuda")
runtime = _import("cuda.bindings.runtime") or _import("cuda.cudart")
nvrtc = _import("cuda.bindings.nvrtc") or _import("cuda.nvrtc")
BINDINGS_VERSION = _dist_version("cuda-bindings", "cuda-python") if driver is not None else None

# --- CuPy -------------------------------------------------------------------------------------------
cupy = None if "cupy" in LEFT_OUT else _import("cupy")
CUPY_VERSION = getattr(cupy, "__version__", None)
numpy = _import("numpy")

# --- cuda.pathfinder --------------------------------------------------------------------------------
# cuda-python's library discovery (its own distribution since 1.0; cuda.bindings imports it to load the
# driver, so leaving it out only skips its own forms). Pure Python: none of its forms needs a GPU.
pathfinder = None if "pathfinder" in LEFT_OUT else _import("cuda.pathfinder")
PATHFINDER_VERSION = _dist_version("cuda-pathfinder") if pathfinder is not None else None

LIBRARIES = {"core": core, "bindings": driver, "cupy": cupy, "pathfinder": pathfinder}
_NAMES = {"core": "cuda.core", "bindings": "cuda.bindings", "cupy": "CuPy", "pathfinder": "cuda.pathfinder"}
_VERSIONS = {"core": CORE_VERSION, "bindings": BINDINGS_VERSION, "cupy": CUPY_VERSION,
             "pathfinder": PATHFINDER_VERSION}


# --- what this environment's build installed -------------------------------------------------------
# cuda_bench.build.environment writes {distribution: version} into the environment's site-packages when it installs a
# build (asv's install step, a reinstall from asv's cache, the paired engine's environments). A library listed
# there that is missing or another version is a broken environment: its cases fail instead of skipping.
_DISTRIBUTIONS = {"core": "cuda-core", "bindings": "cuda-bindings", "pathfinder": "cuda-pathfinder"}


def _built():
    import json
    import sysconfig

    try:
        with open(os.path.join(sysconfig.get_paths()["purelib"], "cuda_bench_env.json")) as f:
            found = json.load(f)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _broken(built):
    """{api: why its library does not match what the environment's build installed}."""
    problems = {}
    for api, dist in _DISTRIBUTIONS.items():
        wanted = built.get(dist)
        if wanted is None or api in LEFT_OUT:
            continue
        have = _dist_version(dist)
        if LIBRARIES[api] is None or have != wanted:
            problems[api] = (f"this environment's build installed {dist} {wanted}, but "
                             + (f"{_NAMES[api]} does not import" if LIBRARIES[api] is None
                                else f"{dist} {have} is here")
                             + ": the environment is broken (asv: remove it from .asv/env and run again)")
    return problems


BROKEN = _broken(_built())


def describe(api):
    """'cuda.core 0.3.2', 'CuPy 14.2.0', ..."""
    return f"{_NAMES[api]} {_VERSIONS[api] or '(not installed)'}"


# Roots that a requirement string may start with, e.g. "core.Device.create_event", "driver.cuInit",
# "utils.StridedMemoryView.from_dlpack", "cupy.cuda.Event", "pathfinder.find_nvidia_header_directory".
_ROOTS = {
    "core": ("core", lambda: core),
    "utils": ("core", lambda: core_utils),
    "system": ("core", lambda: getattr(core, "system", None)),
    "driver": ("bindings", lambda: driver),
    "runtime": ("bindings", lambda: runtime),
    "nvrtc": ("bindings", lambda: nvrtc),
    "cupy": ("cupy", lambda: cupy),
    "numpy": ("cupy", lambda: numpy),
    "pathfinder": ("pathfinder", lambda: pathfinder),
}


def resolve(requirement):
    """Return the object named by ``requirement`` ('core.Device.arch') or raise Unavailable."""
    root, *path = requirement.split(".")
    api, get_root = _ROOTS[root]
    if api in BROKEN and root != "numpy":
        raise BrokenEnvironment(f"{requirement}: {BROKEN[api]}")
    obj = get_root()
    if obj is None:
        missing = "numpy" if root == "numpy" else _NAMES[api]
        if api in LEFT_OUT and root != "numpy":
            raise Unavailable(f"{requirement}: {missing} is left out of this process (CUDA_BENCH_LEAVE_OUT)")
        raise Unavailable(f"{requirement}: {missing} is not importable here")
    for depth, name in enumerate(path):
        try:
            obj = getattr(obj, name)
        except AttributeError:
            raise Unavailable(
                f"{requirement}: {describe(api)} has no {'.'.join([root, *path[: depth + 1]])}"
            ) from None
    return obj


def resolve_all(requirements):
    for requirement in requirements:
        resolve(requirement)


# --- the GPU ----------------------------------------------------------------------------------------
_gpu_problem = []


def require_gpu():
    """Initialise the CUDA driver once per process; raise Unavailable when there is no usable GPU."""
    if _gpu_problem:
        if _gpu_problem[0]:
            raise Unavailable(_gpu_problem[0])
        return
    if BROKEN:  # what the environment's build installed is not all here: every case fails, none skips
        raise BrokenEnvironment("; ".join(BROKEN.values()))
    problem = ""
    if driver is None:
        problem = "no GPU check possible: cuda.bindings is not importable"
    else:
        try:
            (err,) = driver.cuInit(0)
        except Exception as exc:  # cuda-pathfinder raises DynamicLibNotFoundError without libcuda
            problem = f"no CUDA driver here ({type(exc).__name__})"
        else:
            if int(err) != 0:
                problem = f"no usable GPU here (cuInit returned {err!r})"
            else:
                err, count = driver.cuDeviceGetCount()
                if int(err) != 0 or count < 1:
                    problem = "no GPU here (cuDeviceGetCount found none)"
    _gpu_problem.append(problem)
    if problem:
        raise Unavailable(problem)


def has_gpu():
    try:
        require_gpu()
    except Unavailable:
        return False
    return True


def check(result):
    """Unpack a cuda.bindings result tuple in setup code; raise on any error code."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise RuntimeError(f"CUDA call failed: {err!r}")
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


@functools.cache
def primary_context():
    """Device 0's primary context, retained and made current (the context cuda.core and CuPy use too)."""
    require_gpu()
    dev = check(driver.cuDeviceGet(0))
    ctx = check(driver.cuDevicePrimaryCtxRetain(dev))
    check(driver.cuCtxSetCurrent(ctx))
    return dev, ctx


@functools.cache
def compute_capability():
    dev, _ = primary_context()
    attr = driver.CUdevice_attribute
    major = check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
    minor = check(driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
    return major, minor


def require_compute_capability(major, minor, feature):
    have = compute_capability()
    if have < (major, minor):
        raise Unavailable(f"{feature} needs compute capability {major}.{minor}; this GPU has {have[0]}.{have[1]}")


def arch():
    """The compile target: this GPU's, or CUDA_BENCH_ARCH (default sm_90) where there is no GPU."""
    if not has_gpu():
        return os.environ.get("CUDA_BENCH_ARCH", "sm_90")
    major, minor = compute_capability()
    return f"sm_{major}{minor}"


# --- cuda.core, absorbed -----------------------------------------------------------------------------
@functools.cache
def core_device():
    """cuda.core's Device(0), made current."""
    require_gpu()
    dev = core.Device(0)
    dev.set_current()
    return dev


def set_release_threshold(op, keep):
    """Set the release threshold of device 0's current memory pool (the pool ``cudaMallocAsync``, cuda.core's
    default memory resource and CuPy's ``MemoryAsyncPool`` allocate from) to the maximum (``keep``) or to 0,
    for the benchmark ``op``; its teardown restores the previous value (a paired worker runs many cases)."""
    dev, _ = primary_context()
    pool = check(driver.cuDeviceGetMemPool(dev))
    attr = driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
    previous = check(driver.cuMemPoolGetAttribute(pool, attr))
    check(driver.cuMemPoolSetAttribute(pool, attr, driver.cuuint64_t((1 << 64) - 1 if keep else 0)))
    op.defer(lambda: check(driver.cuMemPoolSetAttribute(pool, attr, previous)))


def core_binding_version():
    """cuda.core's own lookup of the cuda.bindings version (#512 made it ``functools.lru_cache``d):
    ``_utils.version.binding_version`` on main, ``_utils.cuda_utils.get_binding_version`` in 0.2-0.5."""
    for module, name in (("cuda.core._utils.version", "binding_version"),
                         ("cuda.core._utils.cuda_utils", "get_binding_version"),
                         ("cuda.core.experimental._utils.cuda_utils", "get_binding_version")):
        found = getattr(_import(module), name, None)
        if found is not None:
            return found
    raise Unavailable(f"{describe('core')} has no binding-version helper (0.2 has the first)")


def core_event_options():
    """EventOptions with timing disabled: ``enable_timing`` became ``timing_enabled`` in 1.0."""
    fields = getattr(core.EventOptions, "__dataclass_fields__", {})
    return core.EventOptions(**{"timing_enabled" if "timing_enabled" in fields else "enable_timing": False})


def core_event(dev, stream=None):
    """An event with timing disabled. 0.1.x has no Device.create_event: record one on a stream."""
    if hasattr(dev, "create_event"):
        return dev.create_event(core_event_options())
    return (stream or dev.default_stream).record(options=core_event_options())


def core_allocate(dev, size, stream):
    """Allocate from the device's memory resource on ``stream`` (keyword-only from 1.0, accepted before)."""
    return dev.memory_resource.allocate(size, stream=stream)


def _stream_in_launch_config():
    """0.1.x carries the stream in LaunchConfig (a dataclass with a ``stream`` field) and launches with
    ``launch(kernel, config, *args)``; 0.2+ takes ``launch(stream, config, kernel, *args)``."""
    fields = getattr(core.LaunchConfig, "__dataclass_fields__", {})
    return "stream" in fields


def core_launch_config(grid, block, stream=None):
    if _stream_in_launch_config():
        return core.LaunchConfig(grid=grid, block=block, stream=stream)
    return core.LaunchConfig(grid=grid, block=block)


def core_launch_call(stream, config, kernel, args):
    """(launch, arguments) in the order this version wants, so the timed body is one native call."""
    if _stream_in_launch_config():
        return core.launch, (kernel, config, *args)
    return core.launch, (stream, config, kernel, *args)


def core_program(source, target_arch):
    """Program(source) with options for ``target_arch``; returns (program, compile_kwargs)."""
    if not hasattr(core, "ProgramOptions"):
        # 0.1.x: Program(code, code_type); options are NVRTC flags passed to compile()
        return core.Program(source, "c++"), {"options": (f"-arch={target_arch}",)}
    options = core.ProgramOptions(arch=target_arch)
    return core.Program(source, "c++", options=options), {}


def require_program_options(*fields):
    """ProgramOptions with these fields (a dataclass in every release that has it), or Unavailable."""
    have = getattr(core.ProgramOptions, "__dataclass_fields__", {})
    missing = [f for f in fields if f not in have]
    if missing:
        raise Unavailable(f"{describe('core')} ProgramOptions has no {', '.join(missing)}")


def core_compile(source, target, target_arch):
    program, kwargs = core_program(source, target_arch)
    return program.compile(target, **kwargs)


def core_memory_view_call(array, stream_ptr):
    """StridedMemoryView.from_dlpack where it exists (0.5+); the constructor before it."""
    view = core_utils.StridedMemoryView
    if hasattr(view, "from_dlpack"):
        return view.from_dlpack, (array, stream_ptr)
    return view, (array, stream_ptr)


def core_kernel_attribute(kernel, name):
    """(callable, args) that read a kernel attribute the way a user does, ``kernel.attributes.<name>``: a
    property from 1.0 on, a method taking an optional device before (0.2-0.x)."""
    if not hasattr(kernel, "attributes"):
        raise Unavailable(f"{describe('core')} Kernel has no attributes")
    found = getattr(type(kernel.attributes), name, None)
    if found is None:
        raise Unavailable(f"{describe('core')} KernelAttributes has no {name}")
    if callable(found):  # a method
        def read(kernel=kernel, name=name):
            return getattr(kernel.attributes, name)()

        return read, ()
    return attrgetter(f"attributes.{name}"), (kernel,)


def object_code_from_cubin(cubin):
    factory = getattr(core.ObjectCode, "from_cubin", None)
    if factory is not None:
        return factory(cubin)
    return core.ObjectCode(cubin, "cubin")  # 0.1.x-0.2.x constructor


# --- cuda.bindings ------------------------------------------------------------------------------------
def bindings_legacy_stream():
    """The legacy default stream as a ``CUstream`` (``CU_STREAM_LEGACY`` is an int in 13.x, a ``CUstream``
    before): where cuda.core's ``Device.default_stream``, CuPy's null stream and the driver's synchronous
    calls (``cuMemcpyDtoD``) queue their work."""
    return driver.CUstream(int(driver.CU_STREAM_LEGACY))


# --- CuPy ---------------------------------------------------------------------------------------------
@functools.cache
def cupy_device():
    """CuPy's Device(0), made current (same primary context as the others)."""
    primary_context()
    dev = cupy.cuda.Device(0)
    dev.use()
    return dev


# --- cuda.bindings, absorbed ---------------------------------------------------------------------------
def nvrtc_compile(source, target, target_arch, name=b"bench.cu", flags=()):
    """Compile with NVRTC through cuda.bindings (``flags``: more NVRTC options); returns the PTX or cubin."""
    program = check(nvrtc.nvrtcCreateProgram(source.encode(), name, 0, [], []))
    try:
        opts = [f"--gpu-architecture={target_arch}".encode(), *(flag.encode() for flag in flags)]
        err, = nvrtc.nvrtcCompileProgram(program, len(opts), opts)
        if int(err) != 0:
            size = check(nvrtc.nvrtcGetProgramLogSize(program))
            log = b" " * size
            check(nvrtc.nvrtcGetProgramLog(program, log))
            raise RuntimeError(f"NVRTC failed: {log.decode(errors='replace')}")
        get_size, get = (
            (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX)
            if target == "ptx"
            else (nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
        )
        out = b" " * check(get_size(program))
        check(get(program, out))
        return out
    finally:
        check(nvrtc.nvrtcDestroyProgram(program))


def module_get_function(module, name):
    return check(driver.cuModuleGetFunction(module, name.encode()))


# --- cuda.pathfinder, absorbed -------------------------------------------------------------------------
_PATHFINDER_CACHES = (("cuda.pathfinder._utils.find_sub_dirs", "find_sub_dirs_cached"),)


def pathfinder_cache_clears(*functions):
    """The ``cache_clear`` of every process-lifetime cache a cold lookup through ``functions`` must miss:
    pathfinder's directory-scan cache (``find_sub_dirs_cached``, 1.0 on) and each of ``functions`` that is itself
    ``functools.cache``d (``find_nvidia_binary_utility``; ``find_nvidia_header_directory`` until 1.3.3,
    ``locate_nvidia_header_directory``, which it calls, from 1.3.4). Unavailable where the scan cache is not
    found: a lookup would then be timed warm."""
    clears = []
    for module, name in _PATHFINDER_CACHES:
        cached = getattr(_import(module), name, None)
        if cached is None or not hasattr(cached, "cache_clear"):
            raise Unavailable(f"{describe('pathfinder')} has no {module}.{name} cache to clear (a cold lookup)")
        clears.append(cached.cache_clear)
    clears += [fn.cache_clear for fn in functions if hasattr(fn, "cache_clear")]
    return tuple(dict.fromkeys(clears))
