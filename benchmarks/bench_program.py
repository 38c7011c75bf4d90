"""Compilation and modules: NVRTC compile to PTX/cubin (also from several threads at once), program options,
kernel lookup, a kernel attribute, module load, NVRTC program creation with no and with 100 headers (seeds #940
#624; cuda-python's nvrtc_* and module_* benchmarks)."""

import os
from concurrent.futures import ThreadPoolExecutor
from operator import attrgetter

from . import _compat as compat
from . import _kernels as kernels
from ._op import Op

SOURCE = 'extern "C" __global__ void saxpy(float a, const float* x, float* y) { y[threadIdx.x] += a * x[threadIdx.x]; }'


class Compile(Op):
    """Compile one small kernel with NVRTC: ``Program(...).compile(target)`` or the nvrtc* sequence."""

    cases = {"target": ["ptx", "cubin"]}
    gpu_free = ("core", "bindings")
    unroll = 1  # tens of microseconds or more: asv's loop is noise here
    needs = {
        "core": ("core.Program",),
        "bindings": ("nvrtc.nvrtcCreateProgram", "nvrtc.nvrtcCompileProgram"),
    }
    timeout = 300

    def core(self, target):
        return compat.core_compile, (SOURCE, target, compat.arch())

    def bindings(self, target):
        return compat.nvrtc_compile, (SOURCE, target, compat.arch())

    def time_compile(self, api, target):
        self.body()


class GetKernel(Op):
    """Look a kernel up by name in a loaded library: ``ObjectCode.get_kernel``, ``cuLibraryGetKernel``,
    ``RawModule.get_function``."""

    differs = "CuPy looks the kernel up with cuModuleGetFunction (the module API); the others with cuLibraryGetKernel"
    needs = {
        "core": ("core.ObjectCode.get_kernel", "core.Program"),
        "bindings": ("driver.cuLibraryGetKernel", "nvrtc.nvrtcCreateProgram"),
        "cupy": ("cupy.RawModule.get_function",),
    }

    def core(self):
        code = kernels.core_object_code()
        return code.get_kernel, ("empty",)

    def bindings(self):
        return compat.driver.cuLibraryGetKernel, (kernels.bindings_library(), b"empty")

    def cupy(self):
        compat.cupy_device()
        return kernels.cupy_module().get_function, ("empty",)

    def time_get_kernel(self, api):
        self.body()


class FuncGetAttribute(Op):
    """Read one attribute (max threads per block) of the loaded ``empty`` kernel: ``cuFuncGetAttribute`` (cuda-python's
    ``func_get_attribute``), ``kernel.attributes.max_threads_per_block`` (a method before cuda.core 1.0), CuPy
    ``Function.max_threads_per_block``."""

    differs = ("cuda.core reads a per-kernel cache after the first call (cuKernelGetAttribute on its CUkernel once); "
               "cuda.bindings, CuPy and C++ ask the driver every time (cuFuncGetAttribute on a CUfunction of a module)")
    needs = {
        "core": ("core.ObjectCode.get_kernel", "core.Program"),  # Kernel.attributes: checked on the kernel
        "bindings": ("driver.cuFuncGetAttribute", "nvrtc.nvrtcCreateProgram"),
        "cupy": ("cupy.RawModule.get_function", "cupy.cuda.function.Function.max_threads_per_block"),
    }

    def core(self):
        return compat.core_kernel_attribute(kernels.core_kernels()["empty"], "max_threads_per_block")

    def bindings(self):
        attr = compat.driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
        return compat.driver.cuFuncGetAttribute, (attr, kernels.bindings_kernels()["empty"])

    def cupy(self):
        compat.cupy_device()
        return attrgetter("max_threads_per_block"), (kernels.cupy_module().get_function("empty"),)

    def time_func_get_attribute(self, api):
        self.body()


class ModuleLoad(Op):
    """Load a cubin, fetch one kernel, unload: ``ObjectCode.from_cubin(...).get_kernel`` (dropped, never
    unloaded: see ``differs``), ``cuLibraryLoadData``/``cuLibraryGetKernel``/``cuLibraryUnload``."""

    version = "111be0fd62d6c061"  # the timed work as before `differs` was written down
    differs = ("cuda.core never unloads the library (no cuLibraryUnload in releases 0.1.0-0.5.1; on main it was "
               "called from 2026-01-28 and is commented out since cuda-python #1660, 2026-02-20): its form is load + "
               "get_kernel, one CUlibrary left loaded per call; cuda.bindings and C++ also unload")
    unroll = 1  # tens of microseconds or more: asv's loop is noise here
    needs = {
        "core": ("core.ObjectCode.get_kernel",),
        "bindings": ("driver.cuLibraryLoadData", "driver.cuLibraryGetKernel", "driver.cuLibraryUnload"),
    }

    def core(self):
        compat.core_device()

        def load(from_cubin=compat.object_code_from_cubin, cubin=kernels.cubin()):
            from_cubin(cubin).get_kernel("empty")

        return load, ()

    def bindings(self):
        compat.primary_context()
        driver = compat.driver

        def load(
            load=driver.cuLibraryLoadData,
            get=driver.cuLibraryGetKernel,
            unload=driver.cuLibraryUnload,
            cubin=kernels.cubin(),
        ):
            library = load(cubin, None, None, 0, None, None, 0)[1]
            get(library, b"empty")
            unload(library)

        return load, ()

    def time_module_load(self, api):
        self.body()


class ModuleLoadLegacy(Op):
    """The module API: ``cuModuleLoadData``, ``cuModuleGetFunction``, ``cuModuleUnload``."""

    unroll = 1  # tens of microseconds or more: asv's loop is noise here
    needs = {"bindings": ("driver.cuModuleLoadData", "driver.cuModuleUnload")}

    def bindings(self):
        compat.primary_context()
        driver = compat.driver

        def load(
            load=driver.cuModuleLoadData,
            get=driver.cuModuleGetFunction,
            unload=driver.cuModuleUnload,
            cubin=kernels.cubin(),
        ):
            module = load(cubin)[1]
            get(module, b"empty")
            unload(module)

        return load, ()

    def time_module_load_legacy(self, api):
        self.body()


class NvrtcCreateProgram(Op):
    """Create an NVRTC program of one empty kernel, no headers, and destroy it (no compilation): cuda-python's
    ``nvrtc_create_program``, ``nvrtcCreateProgram`` + ``nvrtcDestroyProgram``; cuda.core ``Program(code, "c++",
    options)`` + ``close()`` (its constructor creates the NVRTC program), the options made once, beforehand."""

    #: cuda-python's kernel and program name (bench_nvrtc.py of its cuda_bindings benchmarks)
    SOURCE = 'extern "C" __global__ void empty_kernel() { return; }'
    NAME = b"benchmark_kernel.cu"
    gpu_free = ("core", "bindings")
    needs = {
        "core": ("core.Program", "core.Program.close"),
        "bindings": ("nvrtc.nvrtcCreateProgram", "nvrtc.nvrtcDestroyProgram"),
    }

    def core(self):
        program, code = compat.core.Program, self.SOURCE
        if not hasattr(compat.core, "ProgramOptions"):  # 0.1.x: no options at construction

            def create_close(program=program, code=code):
                program(code, "c++").close()

            return create_close, ()
        options = compat.core.ProgramOptions(arch=compat.arch())

        def create_close(program=program, code=code, options=options):
            program(code, "c++", options=options).close()

        return create_close, ()

    def bindings(self):
        def create_destroy(
            create=compat.nvrtc.nvrtcCreateProgram, destroy=compat.nvrtc.nvrtcDestroyProgram, code=self.SOURCE.encode(),
            name=self.NAME
        ):
            destroy(create(code, name, 0, [], [])[1])

        return create_destroy, ()

    def time_nvrtc_create_program(self, api):
        self.body()


class NvrtcCreateProgram100Headers(Op):
    """``nvrtcCreateProgram`` with 100 (empty) headers, then destroy it (#940's stress test of argument
    conversion; no compilation)."""

    gpu_free = ("bindings",)
    unroll = 1  # tens of microseconds or more: asv's loop is noise here
    needs = {"bindings": ("nvrtc.nvrtcCreateProgram", "nvrtc.nvrtcDestroyProgram")}

    def bindings(self):
        count = 100
        names = [f"dummy{i}.h".encode() for i in range(count)]
        sources = [b""] * count
        code = ("".join(f"#include <dummy{i}.h>\n" for i in range(count)) + 'extern "C" __global__ void k() {}\n').encode()

        def create_destroy(
            create=compat.nvrtc.nvrtcCreateProgram,
            destroy=compat.nvrtc.nvrtcDestroyProgram,
            code=code,
            count=count,
            sources=sources,
            names=names,
        ):
            destroy(create(code, b"test.cu", count, sources, names)[1])

        return create_destroy, ()

    def time_nvrtc_create_program_100_headers(self, api):
        self.body()


class CompileOptions(Op):
    """#940's own form: compile its empty kernel to PTX with its options (C++17, relocatable device code, line
    info, device-code optimisation): ``Program(code, "c++", options=ProgramOptions(...)).compile("ptx")``, or
    the nvrtc* sequence with the same flags. cuda.core's own work around NVRTC (its version checks, the
    options made into flags) is part of its form, as in ``Compile``."""

    #: #940's kernel and options (cpcloud's pytest-benchmark in that PR), and the NVRTC flags cuda.core makes of
    #: those options besides the arch (``tests/test_versions.py`` checks them against cuda.core's own); class
    #: attributes, so that asv's version of the benchmark follows them
    SOURCE = "__global__ void empty() {}"
    OPTIONS = {"std": "c++17", "relocatable_device_code": True, "debug": False, "lineinfo": True,
               "device_code_optimize": True}
    FLAGS = ("--relocatable-device-code=true", "--generate-line-info", "--dopt=on", "--std=c++17")
    gpu_free = ("core", "bindings")
    unroll = 1  # tens of microseconds or more: asv's loop is noise here
    needs = {
        "core": ("core.Program", "core.ProgramOptions"),
        "bindings": ("nvrtc.nvrtcCreateProgram", "nvrtc.nvrtcCompileProgram"),
    }
    timeout = 300

    def core(self):
        compat.require_program_options(*self.OPTIONS)
        options = compat.core.ProgramOptions(arch=compat.arch(), **self.OPTIONS)

        def compile_940(program=compat.core.Program, code=self.SOURCE, options=options):
            return program(code, "c++", options=options).compile("ptx")

        return compile_940, ()

    def bindings(self):
        return compat.nvrtc_compile, (self.SOURCE, "ptx", compat.arch(), b"bench.cu", self.FLAGS)

    def time_compile_options(self, api):
        self.body()


class CompileThreads(Op):
    """Compile the small kernel in 1, 2, 4 and 8 threads at once, each its own program (#624: does
    ``nvrtcCompileProgram`` hold the GIL?). The time of the whole batch: flat in the thread count (up to
    the machine's cores) when compilation runs in parallel, growing with it when it is serialised."""

    cases = {"threads": ["1", "2", "4", "8"]}
    gpu_free = ("core", "bindings")
    unroll = 1  # tens of microseconds or more: asv's loop is noise here
    needs = {
        "core": ("core.Program",),
        "bindings": ("nvrtc.nvrtcCreateProgram", "nvrtc.nvrtcCompileProgram"),
    }
    timeout = 300

    def core(self, threads):
        return self._in_threads(compat.core_compile, int(threads))

    def bindings(self, threads):
        return self._in_threads(compat.nvrtc_compile, int(threads))

    def _in_threads(self, compile_one, threads):
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        if cores < threads:
            # a process pinned to fewer cores serialises the threads whatever the GIL does
            raise compat.Unavailable(f"{threads} threads need {threads} cores; this process may use {cores} "
                                     "(asv --cpu-affinity / the paired engine pin benchmark processes)")
        pool = ThreadPoolExecutor(threads)
        self.defer(pool.shutdown)
        args = (SOURCE, "cubin", compat.arch())

        def compile_in_threads(submit=pool.submit, compile_one=compile_one, args=args, threads=threads):
            for future in [submit(compile_one, *args) for _ in range(threads)]:
                future.result()

        return compile_in_threads, ()

    def time_compile_threads(self, api, threads):
        self.body()


class ProgramOptionsCreate(Op):
    """Construct ``ProgramOptions`` with the options of #940 (std, arch, relocatable device code, debug,
    lineinfo, device code optimisation): the argument validation that PR sped up."""

    gpu_free = ("core",)
    needs = {"core": ("core.ProgramOptions",)}

    def core(self):
        compat.require_program_options("std", "arch", "relocatable_device_code", "debug", "lineinfo",
                                       "device_code_optimize")

        def program_options(make=compat.core.ProgramOptions, arch=compat.arch()):
            return make(std="c++17", arch=arch, relocatable_device_code=True, debug=False, lineinfo=True,
                        device_code_optimize=True)

        return program_options, ()

    def time_program_options_create(self, api):
        self.body()
