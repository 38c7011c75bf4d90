// C++ twins of the suite's driver-level operations: the same calls cuda.bindings makes, made from C++.
//
// Built by benchmarks/bench_cpp.py on the benchmark machine (nvcc, -lcuda -lnvrtc) and run once per asv
// run. Usage: twins KERNELS.cubin  ->  one JSON object on stdout, {"op id": seconds per call, ...};
// operations that cannot run here are reported under "skipped" with the reason.
//
// Timing: after a warm-up, BATCHES batches of N calls are timed with steady_clock; the per-call time of
// a batch is its duration / N and the reported number is the median over batches. N is calibrated so a
// batch lasts about TARGET_NS, and is 100 for operations that enqueue GPU work, whose stream is drained
// between batches (outside the timed region) so the launch queue never fills: the same rules as the
// Python side (benchmarks/_op.py).
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int BATCHES = 25;
constexpr double TARGET_NS = 2e5;
constexpr int QUEUED_BATCH = 100;

struct Failure {
    std::string what;
};

void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        throw Failure{std::string(what) + " -> " + (name ? name : "?")};
    }
}
void check(cudaError_t r, const char* what) {
    if (r != cudaSuccess) throw Failure{std::string(what) + " -> " + cudaGetErrorName(r)};
}
void check(nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS) throw Failure{std::string(what) + " -> " + nvrtcGetErrorString(r)};
}
#define CK(call) check((call), #call)

using clk = std::chrono::steady_clock;

double batch_ns(const std::function<void()>& op, long n) {
    auto t0 = clk::now();
    for (long i = 0; i < n; ++i) op();
    return std::chrono::duration<double, std::nano>(clk::now() - t0).count();
}

// Median seconds per call. `drain` (if any) runs after every batch, untimed.
double measure(const std::function<void()>& op, const std::function<void()>& drain = nullptr) {
    long n = 1;
    for (int i = 0; i < 10; ++i) op();  // warm-up
    if (drain) {
        drain();
        n = QUEUED_BATCH;
    } else {
        while (batch_ns(op, n) < TARGET_NS && n < (1L << 24)) n *= 2;
    }
    std::vector<double> per_call;
    for (int b = 0; b < BATCHES; ++b) {
        per_call.push_back(batch_ns(op, n) / n);
        if (drain) drain();
    }
    std::nth_element(per_call.begin(), per_call.begin() + BATCHES / 2, per_call.end());
    return per_call[BATCHES / 2] * 1e-9;
}

std::string read_file(const char* path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += (c == '\n' ? ' ' : c);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s KERNELS.cubin\n", argv[0]);
        return 2;
    }
    std::map<std::string, double> results;
    std::map<std::string, std::string> skipped;
    auto run = [&](const std::string& id, const std::function<double()>& body) {
        try {
            results[id] = body();
        } catch (const Failure& f) {
            skipped[id] = f.what;
        }
    };

    try {
        CK(cuInit(0));
    } catch (const Failure& f) {
        std::printf("{\"error\": \"%s\"}\n", json_escape(f.what).c_str());
        return 0;
    }
    CUdevice dev;
    CUcontext ctx;
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cudaSetDevice(0));
    int major = 0, minor = 0;
    CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CUstream stream;
    CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    auto drain = [&] { CK(cuStreamSynchronize(stream)); };

    // --- device ---------------------------------------------------------------------------------
    run("current_device", [&] { return measure([&] { CUdevice d; cuCtxGetDevice(&d); }); });
    run("runtime_get_device", [&] { return measure([&] { int d; cudaGetDevice(&d); }); });
    run("compute_capability", [&] {
        return measure([&] {
            int a, b;
            cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
            cuDeviceGetAttribute(&b, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        });
    });
    run("current_compute_capability", [&] {
        return measure([&] {
            CUdevice d;
            int a, b;
            cuCtxGetDevice(&d);
            cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
            cuDeviceGetAttribute(&b, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
        });
    });
    run("device_attribute", [&] {
        return measure([&] { int v; cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev); });
    });
    run("set_current", [&] { return measure([&] { cuCtxSetCurrent(ctx); }); });
    run("current_context", [&] { return measure([&] { CUcontext c; cuCtxGetCurrent(&c); }); });
    run("device_sync", [&] { return measure([&] { cuCtxSynchronize(); }); });
    run("driver_version", [&] { return measure([&] { int v; cuDriverGetVersion(&v); }); });
    run("runtime_version", [&] { return measure([&] { int v; cudaRuntimeGetVersion(&v); }); });

    // --- streams and events ---------------------------------------------------------------------
    run("stream_create", [&] {
        return measure([&] { CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING); cuStreamDestroy(s); });
    });
    run("stream_sync", [&] { return measure([&] { cuStreamSynchronize(stream); }); });
    run("event_create", [&] {
        return measure([&] { CUevent e; cuEventCreate(&e, CU_EVENT_DISABLE_TIMING); cuEventDestroy(e); });
    });
    CUevent event;
    CK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
    run("event_record", [&] { return measure([&] { cuEventRecord(event, stream); }, drain); });
    CK(cuEventRecord(event, stream));
    CK(cuStreamSynchronize(stream));
    run("event_query", [&] { return measure([&] { cuEventQuery(event); }); });
    run("event_sync", [&] { return measure([&] { cuEventSynchronize(event); }); });

    // --- memory ---------------------------------------------------------------------------------
    cudaStream_t rt_stream = reinterpret_cast<cudaStream_t>(stream);
    run("alloc_free", [&] {
        return measure([&] { void* p; cudaMallocAsync(&p, 10, rt_stream); cudaFreeAsync(p, rt_stream); }, drain);
    });
    run("alloc_free_sync", [&] {
        return measure([&] {
            void* p;
            cudaMallocAsync(&p, 10, rt_stream);
            cudaFreeAsync(p, rt_stream);
            cudaDeviceSynchronize();
        });
    });
    CUdeviceptr buffer;
    CK(cuMemAlloc(&buffer, 1 << 18));
    run("pointer_get_attribute", [&] {
        return measure([&] { unsigned t; cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, buffer); });
    });
    run("pointer_get_attributes", [&] {
        CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                       CU_POINTER_ATTRIBUTE_HOST_POINTER, CU_POINTER_ATTRIBUTE_BUFFER_ID};
        unsigned type;
        CUdeviceptr dptr;
        void* hptr;
        unsigned long long id;
        void* data[] = {&type, &dptr, &hptr, &id};
        return measure([&] { cuPointerGetAttributes(4, attrs, data, buffer); });
    });

    // --- modules and launches -------------------------------------------------------------------
    std::string cubin = read_file(argv[1]);
    CUmodule module;
    CK(cuModuleLoadData(&module, cubin.data()));
    run("get_kernel", [&] { return measure([&] { CUfunction f; cuModuleGetFunction(&f, module, "empty"); }); });
    run("module_load", [&] {
        return measure([&] {
            CUlibrary lib;
            CUkernel k;
            cuLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
            cuLibraryGetKernel(&k, lib, "empty");
            cuLibraryUnload(lib);
        });
    });
    run("module_load_legacy", [&] {
        return measure([&] {
            CUmodule m;
            CUfunction f;
            cuModuleLoadData(&m, cubin.data());
            cuModuleGetFunction(&f, m, "empty");
            cuModuleUnload(m);
        });
    });
    // the kernels of benchmarks/_kernels.py: "empty" and "empty_<count>_<ptr|int>"
    struct Case {
        const char* id;
        const char* kernel;
        int count;
        bool ptr;
    };
    const Case cases[] = {{"launch[none]", "empty", 0, true},
                          {"launch[2 ptr]", "empty_2_ptr", 2, true},
                          {"launch[16 ptr]", "empty_16_ptr", 16, true},
                          {"launch[256 ptr]", "empty_256_ptr", 256, true},
                          {"launch[512 ptr]", "empty_512_ptr", 512, true},
                          {"launch[16 int]", "empty_16_int", 16, false},
                          {"launch[512 int]", "empty_512_int", 512, false}};
    for (const Case& c : cases) {
        run(c.id, [&] {
            CUfunction f;
            CK(cuModuleGetFunction(&f, module, c.kernel));
            std::vector<CUdeviceptr> ptrs(c.count, buffer);
            std::vector<int> ints(c.count, 1);
            std::vector<void*> params(c.count);
            for (int i = 0; i < c.count; ++i) params[i] = c.ptr ? static_cast<void*>(&ptrs[i]) : &ints[i];
            void** kernel_params = c.count ? params.data() : nullptr;
            return measure([&] { cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, kernel_params, nullptr); }, drain);
        });
    }

    // --- NVRTC ----------------------------------------------------------------------------------
    const char* saxpy =
        "extern \"C\" __global__ void saxpy(float a, const float* x, float* y) "
        "{ y[threadIdx.x] += a * x[threadIdx.x]; }";
    std::string arch = "--gpu-architecture=sm_" + std::to_string(major) + std::to_string(minor);
    for (const char* id : {"compile[ptx]", "compile[cubin]"}) {
        bool ptx = std::strcmp(id, "compile[ptx]") == 0;
        run(id, [&] {
            return measure([&] {
                nvrtcProgram prog;
                CK(nvrtcCreateProgram(&prog, saxpy, "bench.cu", 0, nullptr, nullptr));
                const char* opts[] = {arch.c_str()};
                CK(nvrtcCompileProgram(prog, 1, opts));
                size_t size;
                if (ptx) {
                    nvrtcGetPTXSize(prog, &size);
                    std::string out(size, '\0');
                    nvrtcGetPTX(prog, out.data());
                } else {
                    nvrtcGetCUBINSize(prog, &size);
                    std::string out(size, '\0');
                    nvrtcGetCUBIN(prog, out.data());
                }
                nvrtcDestroyProgram(&prog);
            });
        });
    }
    run("nvrtc_create_program_100_headers", [&] {
        std::vector<std::string> names, sources(100, "");
        std::string code;
        for (int i = 0; i < 100; ++i) {
            names.push_back("dummy" + std::to_string(i) + ".h");
            code += "#include <" + names.back() + ">\n";
        }
        code += "extern \"C\" __global__ void k() {}\n";
        std::vector<const char*> name_ptrs, source_ptrs;
        for (int i = 0; i < 100; ++i) {
            name_ptrs.push_back(names[i].c_str());
            source_ptrs.push_back(sources[i].c_str());
        }
        return measure([&] {
            nvrtcProgram prog;
            nvrtcCreateProgram(&prog, code.c_str(), "test.cu", 100, source_ptrs.data(), name_ptrs.data());
            nvrtcDestroyProgram(&prog);
        });
    });

    // --- TMA --------------------------------------------------------------------------------------
    if (major >= 9) {
        run("tensor_map_encode_tiled", [&] {
            CUdeviceptr tile;
            CK(cuMemAlloc(&tile, 128 * 128 * 4));
            cuuint64_t dims[] = {128, 128}, strides[] = {128 * 4};
            cuuint32_t box[] = {64, 64}, elem[] = {1, 1};
            CUtensorMap map;
            double t = measure([&] {
                cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, reinterpret_cast<void*>(tile),
                                       dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                       CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
            });
            cuMemFree(tile);
            return t;
        });
    } else {
        skipped["tensor_map_encode_tiled"] = "TMA needs compute capability 9.0";
    }

    std::ostringstream out;
    out.precision(9);
    out << "{\"results\": {";
    const char* sep = "";
    for (auto& [id, t] : results) {
        out << sep << "\"" << id << "\": " << t;
        sep = ", ";
    }
    out << "}, \"skipped\": {";
    sep = "";
    for (auto& [id, why] : skipped) {
        out << sep << "\"" << id << "\": \"" << json_escape(why) << "\"";
        sep = ", ";
    }
    out << "}}";
    std::printf("%s\n", out.str().c_str());
    return 0;
}
