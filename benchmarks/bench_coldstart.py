"""Cold start: a fresh interpreter's import of each library, its load of the CUDA driver and its first context, each
net of the same interpreter's ``python -c pass`` (``_coldstart``: one body starts both processes; the case reads
the net clock). cuda-python's #2045 asks for ``import cuda.core`` (which imports cuda.bindings and
cuda.pathfinder too) without what Python's own start costs, and the time to the first driver call, which adds the
driver's load and the resolution of its symbols; #658 found a slowdown in an application's start by stepping
through releases by hand. The C++ twin of the first context is ``bench_cpp.FirstContext``.

``Import`` needs no GPU; ``DriverLoad`` needs the driver's library, ``FirstContext`` a GPU: without, they skip with
the reason. Each statement imports the module a user of that release imports (``cuda.core.experimental`` before
cuda-core 0.5, ``cuda.cuda`` before cuda-bindings had its own distribution), as ``_compat`` finds it.
"""

from . import _compat as compat
from ._coldstart import ColdStart


class Import(ColdStart):
    """``import cuda.core`` (and cuda.bindings' driver module, cuda.pathfinder, CuPy) in a fresh interpreter, net of
    ``python -c pass``."""

    needs = {
        "core": ("core.Device",),
        "bindings": ("driver.cuInit",),
        "cupy": ("cupy.cuda.Device",),
        "pathfinder": ("pathfinder.load_nvidia_dynamic_lib",),
    }
    gpu_free = ("core", "bindings", "cupy", "pathfinder")

    def core(self):
        return f"import {compat.CORE_MODULE}"

    def bindings(self):
        return f"import {compat.driver.__name__}"

    def cupy(self):
        return "import cupy"

    def pathfinder(self):
        return "import cuda.pathfinder"

    def time_import(self, api):
        self.body()


class DriverLoad(ColdStart):
    """``import cuda.pathfinder`` and the CUDA driver's library loaded through it (``load_nvidia_dynamic_lib("cuda")``,
    as cuda.bindings loads it), net of ``python -c pass``. Needs the driver's library, not a GPU."""

    needs = {"pathfinder": ("pathfinder.load_nvidia_dynamic_lib",)}
    gpu_free = ("pathfinder",)

    def pathfinder(self):
        try:
            compat.pathfinder.load_nvidia_dynamic_lib("cuda")  # here first: a missing driver skips, with why
        except Exception as exc:
            said = f"{compat.describe('pathfinder')} cannot load the CUDA driver here ({exc!r})"
            raise compat.Unavailable(said) from exc
        return "from cuda.pathfinder import load_nvidia_dynamic_lib\nload_nvidia_dynamic_lib('cuda')"

    def time_driver_load(self, api):
        self.body()


#: the statement's own check: a CUDA call that returns an error fails the process, as an exception does
_CHECKED = "def ok(result):\n    if int(result[0]):\n        raise SystemExit(repr(result[0]))\n    return result[1:]\n"


class FirstContext(ColdStart):
    """A fresh interpreter's first CUDA context: import, the driver's load and ``cuInit``, device 0's primary context
    made current (cuda.core's ``Device(0).set_current()``; CuPy's first device call, ``Device(0).use()``), net of
    ``python -c pass``. Its C++ twin: ``bench_cpp.FirstContext``."""

    needs = {
        "core": ("core.Device.set_current",),
        "bindings": ("driver.cuInit", "driver.cuDevicePrimaryCtxRetain", "driver.cuCtxSetCurrent"),
        "cupy": ("cupy.cuda.Device.use",),
    }

    def core(self):
        return f"from {compat.CORE_MODULE} import Device\nDevice(0).set_current()"

    def bindings(self):
        return (f"import {compat.driver.__name__} as driver\n{_CHECKED}ok(driver.cuInit(0))\n"
                "(dev,) = ok(driver.cuDeviceGet(0))\n(ctx,) = ok(driver.cuDevicePrimaryCtxRetain(dev))\n"
                "ok(driver.cuCtxSetCurrent(ctx))")

    def cupy(self):
        return "import cupy\ncupy.cuda.Device(0).use()"

    def time_first_context(self, api):
        self.body()
