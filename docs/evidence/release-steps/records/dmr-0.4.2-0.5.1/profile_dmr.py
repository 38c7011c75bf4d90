"""Attribute DeviceMemoryResource(0) / Device() / allocate+close cost between cuda-core releases (e.g. 0.4.2 vs 0.5.1).
Run on a GPU machine: python profile_dmr.py [N] [REPEATS].  One JSON line per measurement on stdout: ns per call, best
of REPEATS loops of N calls, loop overhead NOT subtracted (see the "loop:" baseline).  cProfile lines start with '#'."""
import cProfile
import io
import json
import pstats
import sys
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
R = int(sys.argv[2]) if len(sys.argv) > 2 else 7
import cuda.core

core = cuda.core
if not hasattr(core, "DeviceMemoryResource"):  # 0.1-0.4: everything lives in cuda.core.experimental
    import cuda.core.experimental as core
from cuda.bindings import driver

VER = getattr(cuda.core, "__version__", "?")
DMR, Device, DEVMOD = core.DeviceMemoryResource, core.Device, core.Device.__module__
perf, results = time.perf_counter_ns, {}


def out(what, ns, note=None):
    rec = {"version": VER, "what": what, "ns": None if ns is None else round(ns, 1)}
    if note:
        rec["note"] = note
    results[what] = ns
    print(json.dumps(rec), flush=True)


def _loop(fn, args, n):
    rng = range(n)
    t0 = perf()
    for _ in rng:
        fn(*args)
    return perf() - t0


def bench(what, fn, *args, note=None):
    """Time fn(*args); a missing piece (fn None) or a raising call gives ns=null with the reason."""
    if fn is None:
        return out(what, None, note or "absent in this version")
    try:
        fn(*args)
        out(what, min(_loop(fn, args, N) for _ in range(R)) / N, note)
    except Exception as e:
        out(what, None, f"{type(e).__name__}: {e}")


dev = Device(0)
dev.set_current()
mr = DMR(0)  # the first construction may raise the pool's release threshold; later ones only read it
mempool_opts = getattr(sys.modules[DMR.__mro__[1].__module__], "_MemPoolOptions", None)  # 0.5.x: _MemPool base
cu_utils = sys.modules.get(DEVMOD.rsplit(".", 1)[0] + "._utils.cuda_utils")
check_opts = getattr(cu_utils, "check_or_create_options", None)


def cy_import(mods=sys.modules, name=DEVMOD):
    """Python emulation of Cython 3.2's per-call 'from .._device import Device' (__Pyx__Import_Lookup fast path):
    PyImport_GetModule (sys.modules + __spec__._initializing check), hasattr(mod, 'Device'), getattr(mod, 'Device')."""
    mod = mods[name]
    getattr(mod.__spec__, "_initializing", False)
    hasattr(mod, "Device")
    return mod.Device


LOOP, INIT, NOTE_B = "loop: no-op python function", "DMR.__init__(mr, 0) re-run on a live object (no alloc/dealloc)", \
    "cuda.bindings Python layer: upper bound for the cydriver call cuda-core makes (at both versions)"
NEW = {  # work DMR.__init__ does from 0.5.0 on and not at 0.4.x (timed at both versions where callable)
    "per-call import of Device (emulated, python-level)": cy_import,
    "Device(0).device_id": lambda: Device(0).device_id,
    "_MemPoolOptions()": mempool_opts and (lambda: mempool_opts()),
}
bench(LOOP, lambda: None)
# --- DeviceMemoryResource(0) and its sub-steps ---
bench("DeviceMemoryResource(0)", DMR, 0)
bench("DeviceMemoryResource(Device(0))", DMR, dev)
bench("DMR.__new__(DMR): alloc+__cinit__+dealloc, no __init__", DMR.__new__, DMR)
bench(INIT, DMR.__init__, mr, 0)
for what, fn in NEW.items():
    bench(what + " [in DMR.__init__ from 0.5.0]", fn, note=None if fn else "no _MemPool base in this version")
bench("Device(0)", Device, 0)
bench("check_or_create_options(DMROptions, None, keep_none=True) [both versions]",
      check_opts and (lambda: check_opts(core.DeviceMemoryResourceOptions, None, "DMR options", True)))
bench("getattr(0, 'device_id', 0) [0.4.x DMR.__init__ device lookup]", getattr, 0, "device_id", 0)
pool = driver.cuDeviceGetMemPool(0)[1]
bench("driver.cuDeviceGetMemPool(0) [bindings]", driver.cuDeviceGetMemPool, 0, note=NOTE_B)
bench("driver.cuMemPoolGetAttribute(pool, RELEASE_THRESHOLD) [bindings]", driver.cuMemPoolGetAttribute, pool,
      driver.CUmemPool_attribute.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, note=NOTE_B)
vals = [results.get(w + " [in DMR.__init__ from 0.5.0]") for w in NEW]
D = "derived: DMR.__init__ minus the new sub-steps (= driver calls + super().__init__ dispatch + rest)"
if results.get(INIT) is not None and None not in vals:
    out(D, results[INIT] - sum(v - results[LOOP] for v in vals),
        "compare with the DMR.__init__ re-run at 0.4.x (same driver calls); approximate")
else:
    out(D, None, "needs the 0.5.x sub-steps")
# --- Device() ---
bench("Device()", Device)
bench("Device(Device(0)) (isinstance fast path from 0.5.0)", Device, dev)
bench("Device().compute_capability", lambda: Device().compute_capability)
bench("driver.cuCtxGetDevice() [bindings] (made by Device())", driver.cuCtxGetDevice, note=NOTE_B)
bench("python emulation of the 2 lines added to Device.__new__ (isinstance + getattr)",
      lambda d=None: isinstance(d, Device) or getattr(d, "device_id", d))
# --- allocate / close ---
stream = dev.create_stream()
amr = dev.memory_resource
alloc = amr.allocate
bench("mr.allocate(10, s).close(s)", lambda: alloc(10, stream).close(stream))
stream.sync()
bench("mr.allocate(10, s), freed by Buffer.__dealloc__", alloc, 10, stream)
stream.sync()


def split_alloc_close():
    best = [float("inf")] * 3
    for _ in range(R):
        bufs = [None] * N
        t0 = perf()
        for i in range(N):
            bufs[i] = alloc(10, stream)
        t1 = perf()
        for b in bufs:
            b.close(stream)
        t2 = perf()
        bufs.clear()
        t3 = perf()
        stream.sync()
        best = [min(x, y) for x, y in zip(best, (t1 - t0, t2 - t1, t3 - t2))]
    out("mr.allocate(10, s) alone (buffers kept alive)", best[0] / N)
    out("buf.close(s) alone", best[1] / N)
    out("drop a closed Buffer (__dealloc__ -> close())", best[2] / N)


try:
    split_alloc_close()
except Exception as e:
    out("mr.allocate / buf.close split", None, f"{type(e).__name__}: {e}")
bench("mr.is_mapped (property; allocate reads it from 0.5.0 instead of a C field)", lambda: amr.is_mapped)
bench("driver.cuStreamIsCapturing(s.handle) [bindings] (added to each allocate in 0.5.0)",
      driver.cuStreamIsCapturing, stream.handle, note="bindings upper bound; cuda-core calls it via cydriver")


def construct_many(n=N, cls=DMR):
    for _ in range(n):
        cls(0)


# cProfile: only Python-level frames show; Cython code compiled without profile=True is invisible to it
(prof := cProfile.Profile()).runcall(construct_many)
pstats.Stats(prof, stream=(buf := io.StringIO())).sort_stats("tottime").print_stats(15)
print(f"# cProfile of {N} x DeviceMemoryResource(0), cuda-core {VER} (Cython frames do not appear)")
for line in buf.getvalue().splitlines():
    print("# " + line)
