// C++ twins of the suite's driver-level operations: the same calls cuda.bindings makes, made from C++.
//
// A shared library (benchmarks/bench_cpp.py builds it with nvcc on the benchmark machine, links -lcuda, and
// loads it with ctypes into the Python process that times the Python forms). NVRTC is not linked: its
// functions are taken from the libnvrtc the caller names (the one cuda.bindings loaded in that process), so
// both sides compile with the same NVRTC.
//
//   twins_init(cubin, size, libnvrtc, err, n)  -> 0, or 1 with the reason in err (no driver, ...)
//   twins_load_typed(cubin, size, err, n)      -> 0, or 1 with the reason in err: the typed-argument kernels
//                                                 (benchmarks/_kernels.py TYPED_SOURCE) for launch_typed[...]
//   twins_ids()                                -> "id,id,...": every operation this file knows
//   twins_setup(id, err, n)                    -> 0 ready, 1 skipped (reason in err: no such twin, not on
//                                                 this GPU), 2 error (in err)
//   twins_queued()                             -> calls per sample for an operation that enqueues GPU
//                                                 work (100), 0 otherwise
//   twins_sample(calls)                        -> nanoseconds for `calls` calls (steady_clock); a queued
//                                                 operation's stream (its own queue, or the shared stream)
//                                                 is drained afterwards, untimed
//   twins_teardown()                           -> frees what twins_setup made
//
// Operation IDs are the Python class names in snake case, with the case in brackets:
// Launch('core', '16 ptr') <-> launch[16 ptr]. C++ passes kernel arguments pre-packed, so launch[...] is
// also the twin of LaunchPrepacked.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr long QUEUED_CALLS = 100;  // as benchmarks/_op.py

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
#define CK(call) check((call), #call)

// NVRTC, resolved from the caller's library
struct Nvrtc {
    decltype(&nvrtcCreateProgram) create = nullptr;
    decltype(&nvrtcCompileProgram) compile = nullptr;
    decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
    decltype(&nvrtcGetPTX) ptx = nullptr;
    decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
    decltype(&nvrtcGetCUBIN) cubin = nullptr;
    decltype(&nvrtcDestroyProgram) destroy = nullptr;
} nv;

void check(nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS) throw Failure{std::string(what) + " -> nvrtcResult " + std::to_string(r)};
}

struct Twin {
    std::function<void()> call;
    bool queued = false;
    std::function<void()> cleanup;
    CUstream queue = nullptr;  // where a queued twin's work goes, when not the shared stream (the legacy one)
};

struct State {
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    CUevent event;
    CUdeviceptr buffer;
    CUmodule module;
    CUmodule typed_module = nullptr;
    std::string typed_error = "twins_load_typed was not called";
    CUlibrary library;
    std::string cubin;
    int major = 0, minor = 0;
    std::string arch;
    std::map<std::string, std::function<Twin()>> ops;
};
State* st = nullptr;
std::unique_ptr<Twin> current;
std::string ids;

void write(char* out, size_t n, const std::string& s) {
    if (n) std::snprintf(out, n, "%s", s.c_str());
}

template <class F>
Twin plain(F f) {
    return Twin{f, false, nullptr};
}

CUstream queue_of(const Twin& twin) { return twin.queue ? twin.queue : st->stream; }
void drain() { CK(cuStreamSynchronize(queue_of(*current))); }

// What the release threshold of the device's memory pool is set to for alloc_free_sync[keep|release];
// the previous value comes back in teardown.
Twin with_release_threshold(bool keep, std::function<void()> call) {
    CUmemoryPool pool;
    CK(cuDeviceGetMemPool(&pool, st->dev));
    cuuint64_t previous = 0, value = keep ? ~0ULL : 0ULL;
    CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &previous));
    CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value));
    return Twin{call, false, [pool, previous]() mutable {
                    cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &previous);
                }};
}

// A fresh stream and event, the event recorded once and completed (bench_event._EventOp's pair); ``call``
// is timed on the event; both are destroyed in teardown.
template <class F>
Twin completed_event(F call) {
    CUstream s;
    CUevent e;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CK(cuEventRecord(e, s));
    CK(cuStreamSynchronize(s));
    return Twin{[call, e] { call(e); }, false, [s, e] {
                    cuEventDestroy(e);
                    cuStreamDestroy(s);
                }};
}

Twin compile(bool ptx) {
    if (!nv.create) throw Failure{"no NVRTC was named to twins_init"};
    static const char* saxpy =
        "extern \"C\" __global__ void saxpy(float a, const float* x, float* y) "
        "{ y[threadIdx.x] += a * x[threadIdx.x]; }";
    return plain([ptx] {
        nvrtcProgram prog;
        CK(nv.create(&prog, saxpy, "bench.cu", 0, nullptr, nullptr));
        const char* opts[] = {st->arch.c_str()};
        CK(nv.compile(prog, 1, opts));
        size_t size;
        if (ptx) {
            nv.ptx_size(prog, &size);
            std::string out(size, '\0');
            nv.ptx(prog, out.data());
        } else {
            nv.cubin_size(prog, &size);
            std::string out(size, '\0');
            nv.cubin(prog, out.data());
        }
        nv.destroy(&prog);
    });
}

Twin launch(const char* kernel, int count, bool ptr) {
    CUfunction f;
    CK(cuModuleGetFunction(&f, st->module, kernel));
    auto ptrs = std::make_shared<std::vector<CUdeviceptr>>(count, st->buffer);
    auto ints = std::make_shared<std::vector<int>>(count, 1);
    auto params = std::make_shared<std::vector<void*>>(count);
    for (int i = 0; i < count; ++i) (*params)[i] = ptr ? static_cast<void*>(&(*ptrs)[i]) : &(*ints)[i];
    void** kernel_params = count ? params->data() : nullptr;
    // the argument arrays live as long as the twin: the lambda holds them
    return Twin{[f, kernel_params, ptrs, ints, params] {
                    cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, st->stream, kernel_params, nullptr);
                },
                true, nullptr};
}

// Launches with cuda-python's typed arguments (_kernels.TYPED_CASES; bench_launch.LaunchTyped): `count` copies of
// `value`, each argument a pointer to its own copy, in storage the twin holds.
CUfunction typed_function(const char* kernel) {
    if (!st->typed_module) throw Failure{"no typed kernels: " + st->typed_error};
    CUfunction f;
    CK(cuModuleGetFunction(&f, st->typed_module, kernel));
    return f;
}

template <class T>
Twin launch_values(const char* kernel, int count, T value) {
    CUfunction f = typed_function(kernel);
    std::shared_ptr<T[]> values(new T[count]);
    auto params = std::make_shared<std::vector<void*>>(count);
    for (int i = 0; i < count; ++i) {
        values[i] = value;
        (*params)[i] = &values[i];
    }
    void** kernel_params = params->data();
    return Twin{[f, kernel_params, values, params] {
                    cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, st->stream, kernel_params, nullptr);
                },
                true, nullptr};
}

struct Bytes2048 {
    unsigned char p[2048];
};

// Two 8-byte device buffers and two 8-byte pageable host buffers (bench_memory.Memcpy*), freed in teardown.
struct Copy {
    CUdeviceptr src = 0, dst = 0;
    unsigned char host_src[8] = {}, host_dst[8] = {};
};

template <class F>
Twin copy_twin(F call, bool queued, CUstream queue) {
    auto c = std::make_shared<Copy>();
    CK(cuMemAlloc(&c->src, 8));
    if (cuMemAlloc(&c->dst, 8) != CUDA_SUCCESS) {
        cuMemFree(c->src);
        throw Failure{"cuMemAlloc(8) failed"};
    }
    Twin twin{[c, call] { call(*c); }, queued, [c] {
                  cuMemFree(c->src);
                  cuMemFree(c->dst);
              }};
    twin.queue = queue;
    return twin;
}

// cuda-python's im2col tensor (bench_tensormap._Im2col): fp16, 32 channels x 64 x 64, in a 1 MiB allocation.
struct Im2col {
    CUdeviceptr ptr = 0;
    CUtensorMap map;
    cuuint64_t dims[3] = {32, 64, 64};
    cuuint64_t strides[2] = {32 * 2, 32 * 64 * 2};
    cuuint32_t elem[3] = {1, 1, 1};
    int lower[1] = {0}, upper[1] = {0};
};

// The encode, called once in setup: a layout this driver or GPU does not take skips with the driver's error.
template <class F>
Twin probed(std::shared_ptr<Im2col> t, const char* what, F encode) {
    CUresult probe = encode();
    if (probe != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(probe, &name);
        cuMemFree(t->ptr);
        throw Failure{std::string(what) + " returned " + (name ? name : "?") + " here"};
    }
    return Twin{[encode] { encode(); }, false, [t] { cuMemFree(t->ptr); }};
}

std::shared_ptr<Im2col> im2col_tensor() {
    if (st->major < 9) throw Failure{"TMA needs compute capability 9.0"};
    auto t = std::make_shared<Im2col>();
    CK(cuMemAlloc(&t->ptr, 1 << 20));
    return t;
}

// cuTensorMapEncodeIm2colWide from the loaded driver (CUDA 12.8+): looked up, not linked, so that an older
// driver still loads the twins.
void* driver_symbol(const char* name) {
    for (const char* lib : {"libcuda.so.1", "libcuda.so"}) {
        if (void* handle = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) return dlsym(handle, name);
    }
    return nullptr;
}

void register_ops(State& s) {
    auto& ops = s.ops;
    // --- device ---------------------------------------------------------------------------------
    ops["current_device"] = [] { return plain([] { CUdevice d; cuCtxGetDevice(&d); }); };
    ops["runtime_get_device"] = [] { return plain([] { int d; cudaGetDevice(&d); }); };
    ops["compute_capability"] = [] {
        return plain([] {
            int a, b;
            cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, st->dev);
            cuDeviceGetAttribute(&b, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, st->dev);
        });
    };
    ops["current_compute_capability"] = [] {
        return plain([] {
            CUdevice d;
            int a, b;
            cuCtxGetDevice(&d);
            cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
            cuDeviceGetAttribute(&b, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
        });
    };
    ops["device_attribute"] = [] {
        return plain([] { int v; cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, st->dev); });
    };
    ops["set_current"] = [] { return plain([] { cuCtxSetCurrent(st->ctx); }); };
    ops["current_context"] = [] { return plain([] { CUcontext c; cuCtxGetCurrent(&c); }); };
    ops["device_sync"] = [] { return plain([] { cuCtxSynchronize(); }); };
    ops["device_get"] = [] { return plain([] { CUdevice d; cuDeviceGet(&d, 0); }); };
    // twins_init holds a retain of its own: the pair only moves the reference count, as in Python
    ops["device_primary_ctx_retain"] = [] {
        return plain([] {
            CUcontext c;
            cuDevicePrimaryCtxRetain(&c, st->dev);
            cuDevicePrimaryCtxRelease(st->dev);
        });
    };
    ops["driver_version"] = [] { return plain([] { int v; cuDriverGetVersion(&v); }); };
    ops["runtime_version"] = [] { return plain([] { int v; cudaRuntimeGetVersion(&v); }); };

    // --- streams and events ---------------------------------------------------------------------
    ops["stream_create"] = [] {
        return plain([] { CUstream x; cuStreamCreate(&x, CU_STREAM_NON_BLOCKING); cuStreamDestroy(x); });
    };
    // The sync and query twins use a stream (and event) of their own, made in setup, as every Python side
    // does (bench_stream.StreamSync, bench_event._EventOp): the shared stream has had launches, records and
    // allocations queued on it, and a sync's cost may depend on that history.
    ops["stream_sync"] = [] {
        CUstream s;
        CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        return Twin{[s] { cuStreamSynchronize(s); }, false, [s] { cuStreamDestroy(s); }};
    };
    ops["stream_query"] = [] {
        CUstream s;
        CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        return Twin{[s] { cuStreamQuery(s); }, false, [s] { cuStreamDestroy(s); }};
    };
    ops["event_create"] = [] {
        return plain([] { CUevent e; cuEventCreate(&e, CU_EVENT_DISABLE_TIMING); cuEventDestroy(e); });
    };
    ops["event_record"] = [] { return Twin{[] { cuEventRecord(st->event, st->stream); }, true, nullptr}; };
    ops["event_query"] = [] { return completed_event([](CUevent e) { cuEventQuery(e); }); };
    ops["event_sync"] = [] { return completed_event([](CUevent e) { cuEventSynchronize(e); }); };

    // --- memory ---------------------------------------------------------------------------------
    ops["alloc_free"] = [] {
        return Twin{[] {
                        auto rs = reinterpret_cast<cudaStream_t>(st->stream);
                        void* p;
                        cudaMallocAsync(&p, 10, rs);
                        cudaFreeAsync(p, rs);
                    },
                    true, nullptr};
    };
    for (bool keep : {true, false}) {
        ops[keep ? "alloc_free_sync[keep]" : "alloc_free_sync[release]"] = [keep] {
            return with_release_threshold(keep, [] {
                auto rs = reinterpret_cast<cudaStream_t>(st->stream);
                void* p;
                cudaMallocAsync(&p, 10, rs);
                cudaFreeAsync(p, rs);
                cudaDeviceSynchronize();
            });
        };
    }
    // cuda-python's mem_alloc_free / mem_alloc_async_free_async as bench_memory.AllocFreeStream times them: 1024
    // bytes on the legacy default stream or a stream of its own, the pool's release threshold raised
    for (bool own : {false, true}) {
        ops[own ? "alloc_free_stream[explicit]" : "alloc_free_stream[default]"] = [own] {
            CUstream q = CU_STREAM_LEGACY;
            if (own) CK(cuStreamCreate(&q, CU_STREAM_NON_BLOCKING));
            Twin twin = with_release_threshold(true, [q] {
                CUdeviceptr p;
                cuMemAllocAsync(&p, 1024, q);
                cuMemFreeAsync(p, q);
            });
            auto restore = twin.cleanup;
            twin.cleanup = [restore, own, q] {
                restore();
                if (own) cuStreamDestroy(q);
            };
            twin.queued = true;
            twin.queue = q;
            return twin;
        };
    }
    // 8-byte copies with the synchronous API, as cuda-python's memcpy_*: host to device and back wait for the
    // copy; device to device does not (queued on the legacy default stream, drained between samples)
    ops["memcpy_htod"] = [] {
        return copy_twin([](Copy& c) { cuMemcpyHtoD(c.dst, c.host_src, 8); }, false, nullptr);
    };
    ops["memcpy_dtoh"] = [] {
        return copy_twin([](Copy& c) { cuMemcpyDtoH(c.host_dst, c.src, 8); }, false, nullptr);
    };
    ops["memcpy_dtod"] = [] {
        return copy_twin([](Copy& c) { cuMemcpyDtoD(c.dst, c.src, 8); }, true, CU_STREAM_LEGACY);
    };
    ops["pointer_get_attribute"] = [] {
        return plain([] { unsigned t; cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, st->buffer); });
    };
    ops["pointer_get_attributes"] = [] {
        return plain([] {
            static CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                                  CU_POINTER_ATTRIBUTE_HOST_POINTER, CU_POINTER_ATTRIBUTE_BUFFER_ID};
            unsigned type;
            CUdeviceptr dptr;
            void* hptr;
            unsigned long long id;
            void* data[] = {&type, &dptr, &hptr, &id};
            cuPointerGetAttributes(4, attrs, data, st->buffer);
        });
    };

    // --- modules and launches -------------------------------------------------------------------
    ops["get_kernel"] = [] { return plain([] { CUkernel k; cuLibraryGetKernel(&k, st->library, "empty"); }); };
    ops["func_get_attribute"] = [] {
        CUfunction f;
        CK(cuModuleGetFunction(&f, st->module, "empty"));
        return plain([f] { int v; cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f); });
    };
    ops["module_load"] = [] {
        return plain([] {
            CUlibrary lib;
            CUkernel k;
            cuLibraryLoadData(&lib, st->cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
            cuLibraryGetKernel(&k, lib, "empty");
            cuLibraryUnload(lib);
        });
    };
    ops["module_load_legacy"] = [] {
        return plain([] {
            CUmodule m;
            CUfunction f;
            cuModuleLoadData(&m, st->cubin.data());
            cuModuleGetFunction(&f, m, "empty");
            cuModuleUnload(m);
        });
    };
    // the kernels of benchmarks/_kernels.py: "empty" and "empty_<count>_<ptr|int>"
    struct Case {
        const char* id;
        const char* kernel;
        int count;
        bool ptr;
    };
    static const Case cases[] = {{"launch[none]", "empty", 0, true},
                                 {"launch[2 ptr]", "empty_2_ptr", 2, true},
                                 {"launch[16 ptr]", "empty_16_ptr", 16, true},
                                 {"launch[256 ptr]", "empty_256_ptr", 256, true},
                                 {"launch[512 ptr]", "empty_512_ptr", 512, true},
                                 {"launch[16 int]", "empty_16_int", 16, false},
                                 {"launch[512 int]", "empty_512_int", 512, false}};
    for (const Case& c : cases) ops[c.id] = [c] { return launch(c.kernel, c.count, c.ptr); };
    // the kernels of _kernels.TYPED_SOURCE, with cuda-python's values (bench_launch.LaunchTyped.VALUES)
    ops["launch_typed[512 bool]"] = [] { return launch_values<bool>("empty_512_bool", 512, true); };
    ops["launch_typed[512 char]"] = [] { return launch_values<char>("empty_512_char", 512, 127); };
    ops["launch_typed[512 double]"] = [] { return launch_values<double>("empty_512_double", 512, 1.2345); };
    ops["launch_typed[512 longlong]"] = [] {
        return launch_values<long long>("empty_512_longlong", 512, 9223372036854775806LL);
    };
    ops["launch_typed[2048B struct]"] = [] { return launch_values<Bytes2048>("empty_2048B_struct", 1, Bytes2048{}); };

    // --- NVRTC ----------------------------------------------------------------------------------
    ops["compile[ptx]"] = [] { return compile(true); };
    ops["compile[cubin]"] = [] { return compile(false); };
    ops["nvrtc_create_program"] = [] {
        if (!nv.create) throw Failure{"no NVRTC was named to twins_init"};
        return plain([] {
            nvrtcProgram prog;
            nv.create(&prog, "extern \"C\" __global__ void empty_kernel() { return; }", "benchmark_kernel.cu", 0,
                      nullptr, nullptr);
            nv.destroy(&prog);
        });
    };
    ops["nvrtc_create_program_100_headers"] = [] {
        if (!nv.create) throw Failure{"no NVRTC was named to twins_init"};
        struct Headers {
            std::vector<std::string> names, sources;
            std::string code;
            std::vector<const char*> name_ptrs, source_ptrs;
        };
        auto h = std::make_shared<Headers>();
        h->sources.assign(100, "");
        for (int i = 0; i < 100; ++i) {
            h->names.push_back("dummy" + std::to_string(i) + ".h");
            h->code += "#include <" + h->names.back() + ">\n";
        }
        h->code += "extern \"C\" __global__ void k() {}\n";
        for (int i = 0; i < 100; ++i) {
            h->name_ptrs.push_back(h->names[i].c_str());
            h->source_ptrs.push_back(h->sources[i].c_str());
        }
        return plain([h] {
            nvrtcProgram prog;
            nv.create(&prog, h->code.c_str(), "test.cu", 100, h->source_ptrs.data(), h->name_ptrs.data());
            nv.destroy(&prog);
        });
    };

    // --- TMA --------------------------------------------------------------------------------------
    ops["tensor_map_encode_tiled"] = [] {
        if (st->major < 9) throw Failure{"TMA needs compute capability 9.0"};
        CUdeviceptr tile;
        CK(cuMemAlloc(&tile, 128 * 128 * 4));
        auto map = std::make_shared<CUtensorMap>();
        return Twin{[tile, map] {
                        static cuuint64_t dims[] = {128, 128}, strides[] = {128 * 4};
                        static cuuint32_t box[] = {64, 64}, elem[] = {1, 1};
                        cuTensorMapEncodeTiled(map.get(), CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
                                               reinterpret_cast<void*>(tile), dims, strides, box, elem,
                                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                               CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
                    },
                    false, [tile] { cuMemFree(tile); }};
    };
    ops["tensor_map_encode_im_2col"] = [] {
        auto t = im2col_tensor();
        return probed(t, "cuTensorMapEncodeIm2col", [t] {
            return cuTensorMapEncodeIm2col(&t->map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, reinterpret_cast<void*>(t->ptr),
                                           t->dims, t->strides, t->lower, t->upper, 32, 32, t->elem,
                                           CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                           CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        });
    };
    ops["tensor_map_encode_im_2col_wide"] = []() -> Twin {
#if CUDA_VERSION >= 12080
        auto fn = reinterpret_cast<decltype(&cuTensorMapEncodeIm2colWide)>(driver_symbol("cuTensorMapEncodeIm2colWide"));
        if (!fn) throw Failure{"this driver has no cuTensorMapEncodeIm2colWide"};
        auto t = im2col_tensor();
        return probed(t, "cuTensorMapEncodeIm2colWide", [t, fn] {
            return fn(&t->map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, reinterpret_cast<void*>(t->ptr), t->dims, t->strides,
                      0, 0, 32, 32, t->elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_IM2COL_WIDE_MODE_W,
                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        });
#else
        throw Failure{"built with CUDA headers older than 12.8: no cuTensorMapEncodeIm2colWide"};
#endif
    };
}

template <class T>
void resolve(void* lib, T& fn, const char* name) {
    fn = reinterpret_cast<T>(dlsym(lib, name));
    if (!fn) throw Failure{std::string("libnvrtc has no ") + name};
}

}  // namespace

extern "C" {

int twins_init(const char* cubin, size_t cubin_size, const char* libnvrtc, char* err, size_t n) {
    if (st) return 0;
    try {
        auto s = std::make_unique<State>();
        CK(cuInit(0));
        CK(cuDeviceGet(&s->dev, 0));
        CK(cuDevicePrimaryCtxRetain(&s->ctx, s->dev));
        CK(cuCtxSetCurrent(s->ctx));
        CK(cudaSetDevice(0));
        CK(cuDeviceGetAttribute(&s->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s->dev));
        CK(cuDeviceGetAttribute(&s->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s->dev));
        s->arch = "--gpu-architecture=sm_" + std::to_string(s->major) + std::to_string(s->minor);
        CK(cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING));
        CK(cuEventCreate(&s->event, CU_EVENT_DISABLE_TIMING));
        CK(cuEventRecord(s->event, s->stream));
        CK(cuStreamSynchronize(s->stream));
        CK(cuMemAlloc(&s->buffer, 1 << 18));
        s->cubin.assign(cubin, cubin_size);
        CK(cuModuleLoadData(&s->module, s->cubin.data()));
        CK(cuLibraryLoadData(&s->library, s->cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
        if (libnvrtc && *libnvrtc) {
            void* lib = dlopen(libnvrtc, RTLD_NOW | RTLD_LOCAL);
            if (!lib) throw Failure{std::string("dlopen ") + libnvrtc + ": " + dlerror()};
            resolve(lib, nv.create, "nvrtcCreateProgram");
            resolve(lib, nv.compile, "nvrtcCompileProgram");
            resolve(lib, nv.ptx_size, "nvrtcGetPTXSize");
            resolve(lib, nv.ptx, "nvrtcGetPTX");
            resolve(lib, nv.cubin_size, "nvrtcGetCUBINSize");
            resolve(lib, nv.cubin, "nvrtcGetCUBIN");
            resolve(lib, nv.destroy, "nvrtcDestroyProgram");
        }
        register_ops(*s);
        ids.clear();
        for (auto& [id, _] : s->ops) ids += (ids.empty() ? "" : ",") + id;
        st = s.release();
        return 0;
    } catch (const Failure& f) {
        write(err, n, f.what);
        return 1;
    }
}

int twins_load_typed(const char* cubin, size_t cubin_size, char* err, size_t n) {
    if (!st) {
        write(err, n, "twins_init has not succeeded");
        return 1;
    }
    if (st->typed_module) return 0;
    std::string image(cubin, cubin_size);
    CUresult r = cuModuleLoadData(&st->typed_module, image.data());
    if (r != CUDA_SUCCESS) {
        const char* name = nullptr;
        cuGetErrorName(r, &name);
        st->typed_module = nullptr;
        st->typed_error = std::string("cuModuleLoadData -> ") + (name ? name : "?");
        write(err, n, st->typed_error);
        return 1;
    }
    st->typed_error.clear();
    return 0;
}

const char* twins_ids() { return ids.c_str(); }

void twins_teardown() {
    if (current && current->queued) cuStreamSynchronize(queue_of(*current));
    if (current && current->cleanup) current->cleanup();
    current.reset();
    if (st) cuStreamSynchronize(st->stream);
}

int twins_setup(const char* id, char* err, size_t n) {
    twins_teardown();
    if (!st) {
        write(err, n, "twins_init has not succeeded");
        return 2;
    }
    auto it = st->ops.find(id);
    if (it == st->ops.end()) {
        write(err, n, std::string("no C++ twin named ") + id);
        return 1;
    }
    try {
        current = std::make_unique<Twin>(it->second());
        for (int i = 0; i < 10; ++i) current->call();  // warm-up
        if (current->queued) drain();
        return 0;
    } catch (const Failure& f) {
        current.reset();
        write(err, n, f.what);
        return 1;
    }
}

long twins_queued() { return current && current->queued ? QUEUED_CALLS : 0; }

double twins_sample(long calls) {
    if (!current) return -1;
    auto& call = current->call;
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) call();
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (current->queued) cuStreamSynchronize(queue_of(*current));
    return ns;
}

}  // extern "C"
