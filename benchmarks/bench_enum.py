"""Enums and version queries of cuda.bindings (seeds #439 #546 #982 #1581 #512; cuda-python's enum benchmarks)."""

from . import _compat as compat
from ._op import Op


class ResultFromValue(Op):
    """Construct an error-code enum from its value: ``CUresult(0)`` (282 ns in #439, the fast-enum work)."""

    gpu_free = ("bindings",)
    needs = {"bindings": ("driver.CUresult",)}

    def bindings(self):
        return compat.driver.CUresult, (0,)

    def time_result_from_value(self, api):
        self.body()


class ResultFromErrorValue(Op):
    """Construct a non-success error code: ``CUresult(100)`` (#439: 254 ns where a dict lookup took 20 ns;
    next to ``CUresult(0)``, whose success value the fast-enum work special-cased)."""

    gpu_free = ("bindings",)
    needs = {"bindings": ("driver.CUresult",)}

    def bindings(self):
        return compat.driver.CUresult, (100,)

    def time_result_from_error_value(self, api):
        self.body()


class DeviceAttributeFromValue(Op):
    """Construct a device-attribute enum from its value: ``CUdevice_attribute(1)`` (cuda-python's
    ``device_attribute_construction``; a larger enum than ``CUresult``, next to ``ResultFromValue``)."""

    gpu_free = ("bindings",)
    needs = {"bindings": ("driver.CUdevice_attribute",)}

    def bindings(self):
        return compat.driver.CUdevice_attribute, (1,)

    def time_device_attribute_from_value(self, api):
        self.body()


class ResultMember(Op):
    """Read an enum member by name: ``CUresult.CUDA_SUCCESS`` (through ``getattr``)."""

    gpu_free = ("bindings",)
    needs = {"bindings": ("driver.CUresult.CUDA_SUCCESS",)}

    def bindings(self):
        return getattr, (compat.driver.CUresult, "CUDA_SUCCESS")

    def time_result_member(self, api):
        self.body()


class DriverVersion(Op):
    """The CUDA driver's version: ``cuDriverGetVersion()``, ``cupy.cuda.runtime.driverGetVersion()``."""

    needs = {"bindings": ("driver.cuDriverGetVersion",), "cupy": ("cupy.cuda.runtime.driverGetVersion",)}

    def bindings(self):
        return compat.driver.cuDriverGetVersion, ()

    def cupy(self):
        compat.cupy_device()
        return compat.cupy.cuda.runtime.driverGetVersion, ()

    def time_driver_version(self, api):
        self.body()


class RuntimeVersion(Op):
    """The CUDA runtime's version: ``cudaRuntimeGetVersion()``, ``cupy.cuda.runtime.runtimeGetVersion()``."""

    gpu_free = ("bindings",)
    needs = {"bindings": ("runtime.cudaRuntimeGetVersion",), "cupy": ("cupy.cuda.runtime.runtimeGetVersion",)}

    def bindings(self):
        return compat.runtime.cudaRuntimeGetVersion, ()

    def cupy(self):
        compat.cupy_device()
        return compat.cupy.cuda.runtime.runtimeGetVersion, ()

    def time_runtime_version(self, api):
        self.body()



class BindingVersion(Op):
    """cuda.core's lookup of the installed cuda.bindings version, which it makes on many calls (#512: 6.51 us
    before an ``lru_cache``, 57.8 ns after; the PR body calls it ``cuda.bindings.driver.get_build_version()``,
    a name no cuda.bindings release has). A private helper, resolved per version."""

    gpu_free = ("core",)
    needs = {"core": ("core.Device",)}

    def core(self):
        return compat.core_binding_version(), ()

    def time_binding_version(self, api):
        self.body()
