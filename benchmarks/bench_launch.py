"""Kernel launches and launch configuration (seeds #1221 #1390; cuda-python's launch_* benchmarks).

The kernels are empty; the argument lists are device pointers (``ptr``) or 32-bit ints (``int``).
Each sample is a fixed batch of launches on one stream and the stream is drained between samples, so
the launch queue never fills: the numbers are host-side launch latency.
"""

import ctypes

from . import _compat as compat
from . import _kernels as kernels
from ._op import Op
from .bench_stream import new_bindings_stream


class LaunchConfigCreate(Op):
    """Construct ``LaunchConfig(grid=(1024,), block=(256,))`` (#1221): the constructor, called directly."""

    needs = {"core": ("core.LaunchConfig",)}
    gpu_free = ("core",)

    def core(self):
        return compat.core.LaunchConfig, (), {"grid": (1024,), "block": (256,)}

    def time_launch_config_create(self, api):
        self.body()


class Launch(Op):
    """Launch an empty 1x1 kernel: ``launch()``, ``cuLaunchKernel`` (arguments as Python values), ``RawKernel``.
    ``int`` arguments are ``numpy.int32`` on every side (cuda.bindings with ``ctypes.c_int`` as their type)."""

    queued = True
    version = "e4fd0fd74b19c2f9"  # the timed work as before `differs` named the kernel handles
    differs = ("cuda.core launches a CUkernel of a library (cuLibraryLoadData), the others a CUfunction of a module "
               "(cuModuleLoadData); pointer arguments are each library's own device-pointer object (cuda.core "
               "Buffer, cuda.bindings CUdeviceptr, CuPy ndarray, C++ CUdeviceptr); #1390's bare addresses "
               "(Python ints, typed ctypes.c_void_p for cuda.bindings) are LaunchVoidPointer")
    cases = {"args": kernels.ARG_CASES}
    needs = {
        "core": ("core.launch", "core.LaunchConfig", "core.Program", "numpy.int32"),
        "bindings": ("driver.cuLaunchKernel", "nvrtc.nvrtcCreateProgram", "numpy.int32"),
        "cupy": ("cupy.RawModule", "numpy.int32"),
    }

    def core(self, case):
        int32 = compat.numpy.int32(1)
        return _core_launch(self, case, lambda buffer, count: (int32,) * count if buffer is None else (buffer,) * count)

    def bindings(self, case):
        def params(ptr, count):
            if count == 0:
                return 0
            if ptr is not None:
                return (ptr,) * count, (None,) * count  # CUdeviceptr objects: None means 'a binding type'
            return (compat.numpy.int32(1),) * count, (ctypes.c_int,) * count

        return _bindings_launch(self, case, params)

    def cupy(self, case):
        kind, count = kernels.parse_case(case)
        compat.cupy_device()
        kernel = kernels.cupy_kernels()[kernels.kernel_name(kind, count)]
        stream = compat.cupy.cuda.Stream(non_blocking=True)
        stream.use()
        self.defer(compat.cupy.cuda.Stream.null.use)
        if kind == "ptr":
            self.array = compat.cupy.empty(1, compat.cupy.int32)
            values = (self.array,) * count
        else:
            values = (compat.numpy.int32(1),) * count
        self.drain = stream.synchronize
        return kernel, ((1,), (1,), values)

    def time_launch(self, api, args):
        self.body()


class LaunchVoidPointer(Op):
    """Launch an empty 1x1 kernel with each pointer argument passed as a bare address, a Python ``int``: #1390's
    cuda.bindings form (``cuLaunchKernel`` with ``ctypes.c_void_p`` as the arguments' type) and cuda.core's
    ``launch``, which takes an ``int`` as a pointer (``intptr_t``) in every release (a ``ctypes.c_void_p`` object
    it rejects, TypeError). ``Launch`` passes each library's own pointer object instead; CuPy's is its ndarray."""

    queued = True
    differs = ("cuda.core launches a CUkernel of a library (cuLibraryLoadData), cuda.bindings and C++ a CUfunction "
               "of a module (cuModuleLoadData)")
    cases = {"args": ["2 ptr", "16 ptr", "512 ptr"]}
    needs = {
        "core": ("core.launch", "core.LaunchConfig", "core.Program"),
        "bindings": ("driver.cuLaunchKernel", "nvrtc.nvrtcCreateProgram"),
    }

    def core(self, case):
        return _core_launch(self, case, lambda buffer, count: self.arguments("core", int(buffer.handle), count))

    def bindings(self, case):
        return _bindings_launch(self, case, lambda ptr, count: self.arguments("bindings", int(ptr), count))

    @staticmethod
    def arguments(api, address, count):
        """``count`` pointers to ``address`` as each library takes a bare address: cuda.core's ``launch`` the
        ints, cuda.bindings' ``cuLaunchKernel`` the ints with ``ctypes.c_void_p`` as their type."""
        if api == "core":
            return (address,) * count
        return (address,) * count, (ctypes.c_void_p,) * count

    def time_launch_void_pointer(self, api, args):
        self.body()


class LaunchPrepacked(Op):
    """``cuLaunchKernel`` with the arguments already packed into a ``void**`` array (no Python conversion)."""

    queued = True
    cases = {"args": ["16 ptr", "512 ptr"]}
    needs = {"bindings": ("driver.cuLaunchKernel", "nvrtc.nvrtcCreateProgram")}

    def bindings(self, case):
        kind, count = kernels.parse_case(case)
        function = kernels.bindings_kernels()[kernels.kernel_name(kind, count)]
        stream = new_bindings_stream(self)
        ptr = compat.check(compat.driver.cuMemAlloc(4))
        self.defer(compat.driver.cuMemFree, ptr)
        self._values = [ctypes.c_void_p(int(ptr)) for _ in range(count)]
        self._packed = (ctypes.c_void_p * count)(*(ctypes.addressof(v) for v in self._values))
        self.drain = lambda: compat.check(compat.driver.cuStreamSynchronize(stream))
        return compat.driver.cuLaunchKernel, (function, 1, 1, 1, 1, 1, 1, 0, stream, self._packed, 0)

    def time_launch_prepacked(self, api, args):
        self.body()


def _core_launch(op, case, arguments):
    """(cuda.core's ``launch``, what it is called with) for ``case``'s kernel, 1x1 on a stream of its own that is
    drained between samples; a pointer case gets a 4-byte buffer, freed in teardown. ``arguments(buffer, count)``
    makes the kernel's arguments (``buffer`` None for an int case)."""
    kind, count = kernels.parse_case(case)
    dev = compat.core_device()
    kernel = kernels.core_kernels()[kernels.kernel_name(kind, count)]
    stream = dev.create_stream()
    op.defer(stream.close)
    buffer = None
    if kind == "ptr":
        buffer = compat.core_allocate(dev, 4, stream)
        op.defer(buffer.close, stream)
    op.drain = stream.sync
    config = compat.core_launch_config(1, 1, stream)
    return compat.core_launch_call(stream, config, kernel, arguments(buffer, count))


def _bindings_launch(op, case, arguments):
    """(``cuLaunchKernel``, what it is called with) for ``case``'s kernel, 1x1 on a stream of its own that is
    drained between samples; a pointer case with arguments gets a 4-byte allocation, freed in teardown.
    ``arguments(ptr, count)`` makes the kernelParams (``ptr`` None for an int case and for none)."""
    kind, count = kernels.parse_case(case)
    function = kernels.bindings_kernels()[kernels.kernel_name(kind, count)]
    stream = new_bindings_stream(op)
    ptr = None
    if kind == "ptr" and count:
        ptr = compat.check(compat.driver.cuMemAlloc(4))
        op.defer(compat.driver.cuMemFree, ptr)
    op.drain = lambda: compat.check(compat.driver.cuStreamSynchronize(stream))
    return compat.driver.cuLaunchKernel, (function, 1, 1, 1, 1, 1, 1, 0, stream, arguments(ptr, count), 0)
