"""The CUDA C++ source every library compiles for the launch and module benchmarks, and its loaded forms.

Each library compiles the same source with its own compiler path (cuda.core Program, NVRTC through
cuda.bindings, CuPy RawModule) once per benchmark process, on first use; nothing happens at import.
"""

from __future__ import annotations

import functools

from . import _compat as compat

#: argument lists the launch benchmarks use: ("none", 0) or (kind, count)
ARG_CASES = ["none", "2 ptr", "16 ptr", "256 ptr", "512 ptr", "16 int", "512 int"]


def parse_case(case):
    """'16 ptr' -> ('ptr', 16); 'none' -> ('ptr', 0)"""
    if case == "none":
        return "ptr", 0
    count, kind = case.split()
    return kind, int(count)


def kernel_name(kind, count):
    return "empty" if count == 0 else f"empty_{count}_{kind}"


def _kernel(kind, count):
    ctype = {"ptr": "int*", "int": "int"}[kind]
    params = ", ".join(f"{ctype} a{i}" for i in range(count))
    return f'extern "C" __global__ void {kernel_name(kind, count)}({params}) {{}}\n'


SOURCE = "".join(_kernel(*parse_case(case)) for case in ARG_CASES)
KERNEL_NAMES = [kernel_name(*parse_case(case)) for case in ARG_CASES]


@functools.cache
def cubin():
    """SOURCE compiled for this GPU through cuda.bindings' NVRTC."""
    return compat.nvrtc_compile(SOURCE, "cubin", compat.arch())


@functools.cache
def core_object_code():
    compat.core_device()
    return compat.core_compile(SOURCE, "cubin", compat.arch())


@functools.cache
def core_kernels():
    code = core_object_code()
    return {name: code.get_kernel(name) for name in KERNEL_NAMES}


@functools.cache
def bindings_module():
    compat.primary_context()
    return compat.check(compat.driver.cuModuleLoadData(cubin()))


@functools.cache
def bindings_library():
    """The cubin loaded with the library API (``cuLibraryLoadData``), as cuda.core loads its code."""
    compat.primary_context()
    return compat.check(compat.driver.cuLibraryLoadData(cubin(), None, None, 0, None, None, 0))


@functools.cache
def bindings_kernels():
    module = bindings_module()
    return {name: compat.module_get_function(module, name) for name in KERNEL_NAMES}


@functools.cache
def cupy_module():
    compat.cupy_device()
    return compat.cupy.RawModule(code=SOURCE)


@functools.cache
def cupy_kernels():
    module = cupy_module()
    return {name: module.get_function(name) for name in KERNEL_NAMES}


# --- typed arguments (cuda-python #2904) ---------------------------------------------------------------
# Kernels of their own, in a source and modules of their own: the kernels above, and the modules every
# library loads them from, stay as they were.

#: the launches cuda-python's launch benchmarks found #2904's packing regression with: per case, the C type
#: of each argument and how many (a 2048-byte struct passed by value is one argument)
TYPED_CASES = {
    "512 bool": ("bool", 512),
    "512 char": ("char", 512),
    "512 double": ("double", 512),
    "512 longlong": ("long long", 512),
    "2048B struct": ("Bytes2048", 1),
}
STRUCT_BYTES = 2048


def typed_kernel_name(case):
    """'512 double' -> 'empty_512_double', '2048B struct' -> 'empty_2048B_struct'"""
    return "empty_" + case.replace(" ", "_")


def _typed_kernel(case):
    ctype, count = TYPED_CASES[case]
    params = ", ".join(f"{ctype} a{i}" for i in range(count))
    return f'extern "C" __global__ void {typed_kernel_name(case)}({params}) {{}}\n'


TYPED_SOURCE = (f"struct Bytes2048 {{ unsigned char p[{STRUCT_BYTES}]; }};\n"
                + "".join(_typed_kernel(case) for case in TYPED_CASES))
TYPED_KERNEL_NAMES = [typed_kernel_name(case) for case in TYPED_CASES]


@functools.cache
def typed_cubin():
    """TYPED_SOURCE compiled for this GPU through cuda.bindings' NVRTC."""
    return compat.nvrtc_compile(TYPED_SOURCE, "cubin", compat.arch())


@functools.cache
def core_typed_kernels():
    compat.core_device()
    code = compat.core_compile(TYPED_SOURCE, "cubin", compat.arch())
    return {name: code.get_kernel(name) for name in TYPED_KERNEL_NAMES}


@functools.cache
def bindings_typed_kernels():
    compat.primary_context()
    module = compat.check(compat.driver.cuModuleLoadData(typed_cubin()))
    return {name: compat.module_get_function(module, name) for name in TYPED_KERNEL_NAMES}


@functools.cache
def cupy_typed_kernels():
    compat.cupy_device()
    module = compat.cupy.RawModule(code=TYPED_SOURCE)
    return {name: module.get_function(name) for name in TYPED_KERNEL_NAMES}
