"""Does importing cuda.core (main's build) slow cuda.bindings' cuLaunchKernel with 512 CUdeviceptr arguments,
and does it matter whether the import comes before CUDA starts? One process, one MODE (argv[1]):
none (cuda.core never imported), early (imported first), late (imported after the setup, before timing).
Prints one JSON line: the best of many batches of 100 launches + one sync, in ns per launch."""
import json, sys, time

mode = sys.argv[1]
if mode == "early":
    import cuda.core  # noqa: F401
from cuda.bindings import driver, nvrtc


def ok(result):
    err, *rest = result
    assert int(err) == 0, result
    return rest[0] if len(rest) == 1 else rest


ok(driver.cuInit(0))
dev = ok(driver.cuDeviceGet(0))
ctx = ok(driver.cuDevicePrimaryCtxRetain(dev))
ok(driver.cuCtxSetCurrent(ctx))
src = 'extern "C" __global__ void k(' + ", ".join(f"int* a{i}" for i in range(512)) + ") {}\n"
prog = ok(nvrtc.nvrtcCreateProgram(src.encode(), b"k.cu", 0, [], []))
ok(nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=sm_90"]))
size = ok(nvrtc.nvrtcGetCUBINSize(prog))
cubin = b" " * size
ok(nvrtc.nvrtcGetCUBIN(prog, cubin))
module = ok(driver.cuModuleLoadData(cubin))
kernel = ok(driver.cuModuleGetFunction(module, b"k"))
ptr = ok(driver.cuMemAlloc(4))
params = ((ptr,) * 512, (None,) * 512)
if mode == "late":
    import cuda.core  # noqa: F401
launch, sync, stream = driver.cuLaunchKernel, driver.cuCtxSynchronize, driver.CUstream(0)
ok(launch(kernel, 1, 1, 1, 1, 1, 1, 0, stream, params, 0))  # the launch works: what follows times launches
ok(sync())


def batch():
    t0 = time.perf_counter_ns()
    for _ in range(100):
        launch(kernel, 1, 1, 1, 1, 1, 1, 0, stream, params, 0)
    sync()
    return time.perf_counter_ns() - t0


for _ in range(20):
    batch()
best, n, end = float("inf"), 0, time.monotonic() + float(sys.argv[2] if len(sys.argv) > 2 else 2.0)
while time.monotonic() < end:
    best = min(best, batch())
    n += 1
print(json.dumps({"mode": mode, "ns_per_launch": best / 100, "batches": n,
                  "cuda_core": sys.modules["cuda.core"].__version__ if "cuda.core" in sys.modules else None}))
