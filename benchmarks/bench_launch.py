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


class _Bytes2048(ctypes.Structure):
    """The 2048-byte struct the ``2048B struct`` kernel takes by value, as cuda-python's benchmark builds it."""

    _fields_ = [("p", ctypes.c_uint8 * kernels.STRUCT_BYTES)]


class LaunchTyped(Op):
    """Launch an empty 1x1 kernel with 512 ``bool``, ``char``, ``double`` or ``long long`` arguments, or one
    2048-byte struct by value: cuda-python's launch benchmarks with typed arguments, which found #2904's
    packing regression (512 doubles: 64.78 -> 6.44 us per launch with that PR). cuda.bindings passes their
    Python values with ctypes types (``(1.2345,) * 512`` as ``ctypes.c_double``; the struct as a
    ``ctypes.Structure`` with ``None``); cuda.core and CuPy numpy scalars of the kernel's type (CuPy the struct
    as a one-element structured numpy array). The kernels are ``_kernels.TYPED_SOURCE``, in modules of their
    own."""

    queued = True
    differs = ("cuda.core launches a CUkernel of a library (cuLibraryLoadData), the others a CUfunction of a module "
               "(cuModuleLoadData); cuda.bindings passes Python values with ctypes types (cuda-python's own form), "
               "cuda.core and CuPy numpy scalars of the kernel's types; a library whose launch rejects the struct "
               "(TypeError) skips that case")
    cases = {"args": list(kernels.TYPED_CASES)}
    needs = {
        "core": ("core.launch", "core.LaunchConfig", "core.Program", "numpy.int8"),
        "bindings": ("driver.cuLaunchKernel", "nvrtc.nvrtcCreateProgram"),
        "cupy": ("cupy.RawModule", "numpy.int8"),
    }
    #: cuda-python's values (bench_launch.py of its cuda_bindings benchmarks), per C type
    VALUES = {"bool": True, "char": 127, "double": 1.2345, "long long": 9223372036854775806}
    CTYPES = {"bool": ctypes.c_bool, "char": ctypes.c_byte, "double": ctypes.c_double, "long long": ctypes.c_longlong}
    NUMPY = {"bool": "bool_", "char": "int8", "double": "float64", "long long": "int64"}

    def core(self, case):
        dev = compat.core_device()
        kernel = kernels.core_typed_kernels()[kernels.typed_kernel_name(case)]
        stream = dev.create_stream()
        self.defer(stream.close)
        self.drain = stream.sync
        config = compat.core_launch_config(1, 1, stream)
        fn, args = compat.core_launch_call(stream, config, kernel, self.arguments("core", case))
        return self._struct_taken("core", case, fn, args)

    def bindings(self, case):
        function = kernels.bindings_typed_kernels()[kernels.typed_kernel_name(case)]
        stream = new_bindings_stream(self)
        self.drain = lambda: compat.check(compat.driver.cuStreamSynchronize(stream))
        params = self.arguments("bindings", case)
        return compat.driver.cuLaunchKernel, (function, 1, 1, 1, 1, 1, 1, 0, stream, params, 0)

    def cupy(self, case):
        compat.cupy_device()
        kernel = kernels.cupy_typed_kernels()[kernels.typed_kernel_name(case)]
        stream = compat.cupy.cuda.Stream(non_blocking=True)
        stream.use()
        self.defer(compat.cupy.cuda.Stream.null.use)
        self.drain = stream.synchronize
        return self._struct_taken("cupy", case, kernel, ((1,), (1,), self.arguments("cupy", case)))

    @classmethod
    def arguments(cls, api, case):
        """The kernel's arguments for ``case`` as ``api`` takes them: cuda.bindings ``(values, ctypes types)``,
        cuda.core and CuPy a tuple of values."""
        ctype, count = kernels.TYPED_CASES[case]
        if ctype == "Bytes2048":
            if api == "bindings":
                return (_Bytes2048(),), (None,)
            if api == "cupy":
                return (compat.numpy.zeros(1, [("p", compat.numpy.uint8, kernels.STRUCT_BYTES)]),)
            return (_Bytes2048(),)
        if api == "bindings":
            return (cls.VALUES[ctype],) * count, (cls.CTYPES[ctype],) * count
        return (getattr(compat.numpy, cls.NUMPY[ctype])(cls.VALUES[ctype]),) * count

    def _struct_taken(self, api, case, fn, args):
        """A library that takes no struct by value raises TypeError on the first launch: the case skips with it."""
        if kernels.TYPED_CASES[case][0] == "Bytes2048":
            try:
                fn(*args)
            except TypeError as exc:
                raise compat.Unavailable(f"{compat.describe(api)} launches take no struct by value ({exc})") from exc
            self.drain()
        return fn, args

    def time_launch_typed(self, api, args):
        self.body()
