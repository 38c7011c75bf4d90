// The C++ twin of a cold start (benchmarks/_coldstart.py): a fresh process that loads the CUDA driver, initialises
// it and makes device 0's primary context current, as cuda.core's Device(0).set_current() does, and exits.
//
//   coldstart          the first context; exit 0, or 3 with why on stderr when there is no driver or GPU
//   coldstart pass     the same program doing nothing: the empty process the first is timed against
//
// The driver is loaded with dlopen, as cuda.bindings loads it, so the program builds without CUDA's headers or
// its stub library; only the four entry points it calls are resolved.
#include <dlfcn.h>
#include <cstdio>
#include <cstring>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;

template <typename F>
static F entry(void *lib, const char *name) {
    return reinterpret_cast<F>(dlsym(lib, name));
}

int main(int argc, char **argv) {
    if (argc > 1 && std::strcmp(argv[1], "pass") == 0) return 0;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        std::fprintf(stderr, "no CUDA driver here (%s)\n", dlerror());
        return 3;
    }
    auto cuInit = entry<CUresult (*)(unsigned)>(lib, "cuInit");
    auto cuDeviceGet = entry<CUresult (*)(CUdevice *, int)>(lib, "cuDeviceGet");
    auto cuDevicePrimaryCtxRetain = entry<CUresult (*)(CUcontext *, CUdevice)>(lib, "cuDevicePrimaryCtxRetain");
    auto cuCtxSetCurrent = entry<CUresult (*)(CUcontext)>(lib, "cuCtxSetCurrent");
    if (!cuInit || !cuDeviceGet || !cuDevicePrimaryCtxRetain || !cuCtxSetCurrent) {
        std::fprintf(stderr, "the CUDA driver lacks an entry point this program calls\n");
        return 3;
    }
    CUresult err = cuInit(0);
    if (err) {
        std::fprintf(stderr, "no usable GPU here (cuInit returned %d)\n", err);
        return 3;
    }
    CUdevice dev;
    CUcontext ctx;
    if ((err = cuDeviceGet(&dev, 0)) || (err = cuDevicePrimaryCtxRetain(&ctx, dev)) || (err = cuCtxSetCurrent(ctx))) {
        std::fprintf(stderr, "the first context failed (CUresult %d)\n", err);
        return 4;
    }
    return 0;
}
