"""Device queries: current device, a device by ordinal, compute capability, attributes, set-current, the primary
context's retain/release, an idle sync (seeds #439 #459 #460 #739 #756 #781; cuda-python's ctx_device
benchmarks)."""

from operator import attrgetter

from . import _compat as compat
from ._op import Op


class CurrentDevice(Op):
    """The current device as an object: ``Device()``, ``cuCtxGetDevice()``, ``cupy.cuda.Device()``."""

    needs = {
        "core": ("core.Device",),
        "bindings": ("driver.cuCtxGetDevice",),
        "cupy": ("cupy.cuda.Device",),
    }

    def core(self):
        compat.core_device()
        return compat.core.Device, ()

    def bindings(self):
        compat.primary_context()
        return compat.driver.cuCtxGetDevice, ()

    def cupy(self):
        compat.cupy_device()
        return compat.cupy.cuda.Device, ()

    def time_current_device(self, api):
        self.body()


class DeviceGet(Op):
    """Device 0 by its ordinal: ``Device(0)``, ``cuDeviceGet(0)``, ``cupy.cuda.Device(0)`` (cuda-python's
    ``device_get``; ``CurrentDevice`` is the current device, ``Device()``)."""

    differs = ("cuda.core returns its per-thread Device object for the ordinal (a cache lookup, after whatever "
               "check of the ordinal the release makes); CuPy builds a Device object from the ordinal without a "
               "CUDA call; cuda.bindings and C++ ask the driver (cuDeviceGet)")
    needs = {
        "core": ("core.Device",),
        "bindings": ("driver.cuDeviceGet",),
        "cupy": ("cupy.cuda.Device",),
    }

    def core(self):
        compat.core_device()
        return compat.core.Device, (0,)

    def bindings(self):
        compat.primary_context()
        return compat.driver.cuDeviceGet, (0,)

    def cupy(self):
        compat.cupy_device()
        return compat.cupy.cuda.Device, (0,)

    def time_device_get(self, api):
        self.body()


class DevicePrimaryCtxRetain(Op):
    """Retain and release device 0's primary context, ``cuDevicePrimaryCtxRetain`` + ``cuDevicePrimaryCtxRelease``
    as one small function (cuda-python's ``device_primary_ctx_retain``). The suite holds its own retain for the
    whole process, so the pair only moves the reference count. cuda.core and CuPy have no such call."""

    needs = {"bindings": ("driver.cuDevicePrimaryCtxRetain", "driver.cuDevicePrimaryCtxRelease")}

    def bindings(self):
        dev, _ = compat.primary_context()  # the outer retain

        def retain_release(
            retain=compat.driver.cuDevicePrimaryCtxRetain, release=compat.driver.cuDevicePrimaryCtxRelease, dev=dev
        ):
            retain(dev)
            release(dev)

        return retain_release, ()

    def time_device_primary_ctx_retain(self, api):
        self.body()


class RuntimeGetDevice(Op):
    """The current device ordinal through the runtime API: ``cudaGetDevice()``, ``cupy.cuda.runtime.getDevice()``."""

    needs = {"bindings": ("runtime.cudaGetDevice",), "cupy": ("cupy.cuda.runtime.getDevice",)}

    def bindings(self):
        compat.primary_context()
        return compat.runtime.cudaGetDevice, ()

    def cupy(self):
        compat.cupy_device()
        return compat.cupy.cuda.runtime.getDevice, ()

    def time_runtime_get_device(self, api):
        self.body()


class ComputeCapability(Op):
    """Read the compute capability of a device object; bindings: the two ``cuDeviceGetAttribute`` calls."""

    version = "177bc89ad12eb95d"  # the timed work as before `differs` named cuda.core 0.1's calls
    differs = ("cuda.core (0.2.0 on; 0.1.x calls cudaDeviceGetAttribute twice) and CuPy return the device "
               "object's cached value; cuda.bindings and C++ make the two cuDeviceGetAttribute calls every time")
    needs = {
        "core": ("core.Device.compute_capability",),
        "bindings": ("driver.cuDeviceGetAttribute",),
        "cupy": ("cupy.cuda.Device.compute_capability",),
    }

    def core(self):
        return attrgetter("compute_capability"), (compat.core_device(),)

    def bindings(self):
        dev, _ = compat.primary_context()
        attr = compat.driver.CUdevice_attribute

        def compute_capability(
            get=compat.driver.cuDeviceGetAttribute,
            major=attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            minor=attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            dev=dev,
        ):
            return get(major, dev)[1], get(minor, dev)[1]

        return compute_capability, ()

    def cupy(self):
        return attrgetter("compute_capability"), (compat.cupy_device(),)

    def time_compute_capability(self, api):
        self.body()


class DeviceArch(Op):
    """``Device.arch`` (cuda.core 0.4+), the string form of the compute capability."""

    needs = {"core": ("core.Device.arch",)}

    def core(self):
        return attrgetter("arch"), (compat.core_device(),)

    def time_device_arch(self, api):
        self.body()


class DeviceAttribute(Op):
    """Read one device attribute (multiprocessor count), as each library exposes it."""

    needs = {
        "core": ("core.Device.properties",),
        "bindings": ("driver.cuDeviceGetAttribute",),
        "cupy": ("cupy.cuda.runtime.deviceGetAttribute",),
    }

    version = "53670f8ca52f97f3"  # the timed work as before `differs` was corrected
    differs = ("cuda.core reads the attribute from a per-device cache after the first call; cuda.bindings and C++ "
               "ask the driver (cuDeviceGetAttribute) every time, CuPy the runtime (cudaDeviceGetAttribute)")

    def core(self):
        device = compat.core_device()
        if not hasattr(device.properties, "multiprocessor_count"):
            # cuda-core 0.1: Device.properties is the runtime's cudaDeviceProp (multiProcessorCount)
            raise compat.Unavailable("cuda.core Device.properties has no DeviceProperties.multiprocessor_count")
        return attrgetter("properties.multiprocessor_count"), (device,)

    def bindings(self):
        dev, _ = compat.primary_context()
        attr = compat.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        return compat.driver.cuDeviceGetAttribute, (attr, dev)

    def cupy(self):
        compat.cupy_device()
        runtime = compat.cupy.cuda.runtime
        return runtime.deviceGetAttribute, (runtime.cudaDevAttrMultiProcessorCount, 0)

    def time_device_attribute(self, api):
        self.body()


class SetCurrent(Op):
    """Make device 0 current: ``Device.set_current()``, ``cuCtxSetCurrent(primary)``, ``cupy.cuda.Device(0).use()``."""

    needs = {
        "core": ("core.Device.set_current",),
        "bindings": ("driver.cuCtxSetCurrent",),
        "cupy": ("cupy.cuda.Device.use",),
    }

    def core(self):
        return compat.core_device().set_current, ()

    def bindings(self):
        _, ctx = compat.primary_context()
        return compat.driver.cuCtxSetCurrent, (ctx,)

    def cupy(self):
        return compat.cupy_device().use, ()

    def time_set_current(self, api):
        self.body()


class CurrentContext(Op):
    """The current context: ``Device.context``, ``cuCtxGetCurrent()``."""

    needs = {"core": ("core.Device.context",), "bindings": ("driver.cuCtxGetCurrent",)}

    def core(self):
        return attrgetter("context"), (compat.core_device(),)

    def bindings(self):
        compat.primary_context()
        return compat.driver.cuCtxGetCurrent, ()

    def time_current_context(self, api):
        self.body()


class CurrentComputeCapability(Op):
    """The seeds' own form (#439, #459): look the current device up, then read its compute capability:
    ``Device().compute_capability``, ``cupy.cuda.Device().compute_capability``; bindings: ``cuCtxGetDevice``
    and the two ``cuDeviceGetAttribute`` calls (no cache)."""

    version = "b49924152ea99b4a"  # the timed work as before `differs` was written down
    differs = ("cuda.core (0.2.0 on; 0.1.x calls cudaDeviceGetAttribute twice) and CuPy look the current device "
               "up and return its cached compute capability; cuda.bindings and C++ call cuCtxGetDevice and the two "
               "cuDeviceGetAttribute every time")
    needs = {
        "core": ("core.Device.compute_capability",),
        "bindings": ("driver.cuCtxGetDevice", "driver.cuDeviceGetAttribute"),
        "cupy": ("cupy.cuda.Device.compute_capability",),
    }

    def core(self):
        compat.core_device()

        def current_compute_capability(device=compat.core.Device):
            return device().compute_capability

        return current_compute_capability, ()

    def bindings(self):
        compat.primary_context()
        attr = compat.driver.CUdevice_attribute

        def current_compute_capability(
            current=compat.driver.cuCtxGetDevice,
            get=compat.driver.cuDeviceGetAttribute,
            major=attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            minor=attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        ):
            dev = current()[1]
            return get(major, dev)[1], get(minor, dev)[1]

        return current_compute_capability, ()

    def cupy(self):
        compat.cupy_device()

        def current_compute_capability(device=compat.cupy.cuda.Device):
            return device().compute_capability

        return current_compute_capability, ()

    def time_current_compute_capability(self, api):
        self.body()


class DeviceSync(Op):
    """Synchronise an idle device: ``Device.sync()``, ``cuCtxSynchronize()``,
    ``cupy.cuda.runtime.deviceSynchronize()`` (the ``Device().sync()`` of #756, with nothing to wait for)."""

    synchronizes = True
    needs = {
        "core": ("core.Device.sync",),
        "bindings": ("driver.cuCtxSynchronize",),
        "cupy": ("cupy.cuda.runtime.deviceSynchronize",),
    }

    def core(self):
        return compat.core_device().sync, ()

    def bindings(self):
        compat.primary_context()
        return compat.driver.cuCtxSynchronize, ()

    def cupy(self):
        compat.cupy_device()
        return compat.cupy.cuda.runtime.deviceSynchronize, ()

    def time_device_sync(self, api):
        self.body()
