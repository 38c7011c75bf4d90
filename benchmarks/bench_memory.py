"""Memory: small async allocations, with and without a device sync, on the default stream or one of their own,
8-byte copies, memory resources, pointer attributes (seeds #756 #876 #1274; cuda-python's memory benchmarks).

In ``AllocFree`` CuPy allocates from its own caching pool, not the driver's stream-ordered pool: its numbers
are a pool hit. cuda.core and the runtime calls allocate from the device's memory pool, whose release
threshold decides whether a sync hands memory back to the driver (the 646 us of #756): ``AllocFreeSync``
sets it explicitly on every side, both ways.
"""

from . import _compat as compat
from ._op import Op
from .bench_stream import new_bindings_stream

SIZE = 10  # bytes, as in the seeds
ALLOC_SIZE = 1024  # bytes, as cuda-python's mem_alloc_* benchmarks
COPY_SIZE = 8  # bytes, as cuda-python's memcpy_* benchmarks: the call, not the bandwidth


def _core_stream(op):
    stream = compat.core_device().create_stream()
    op.defer(stream.close)
    return stream


class AllocFree(Op):
    """Allocate and free 10 bytes on a stream, without synchronising (stream drained between samples)."""

    version = "3d9f9021aded90cf"  # the timed work as before `differs` was written down
    differs = ("CuPy allocates from its own caching pool; cuda.core (0.4.0 on) raises the device pool's release "
               "threshold when it makes its memory resource, cuda.bindings and C++ keep the driver's default (0), so "
               "the drain between samples hands their memory back to the driver (AllocFreeSync sets it on every side); "
               "in one process, as over C++ is timed, the threshold cuda.core raised holds for every side after it")
    queued = True
    needs = {
        "core": ("core.Device.memory_resource",),
        "bindings": ("runtime.cudaMallocAsync", "runtime.cudaFreeAsync"),
        "cupy": ("cupy.empty",),
    }

    def core(self):
        dev = compat.core_device()
        stream = _core_stream(self)
        self.drain = stream.sync

        def alloc_free(allocate=dev.memory_resource.allocate, size=SIZE, stream=stream):
            allocate(size, stream=stream).close(stream)

        return alloc_free, ()

    def bindings(self):
        stream = new_bindings_stream(self)
        self.drain = lambda: compat.check(compat.driver.cuStreamSynchronize(stream))

        def alloc_free(
            malloc=compat.runtime.cudaMallocAsync, free=compat.runtime.cudaFreeAsync, size=SIZE, stream=stream
        ):
            free(malloc(size, stream)[1], stream)

        return alloc_free, ()

    def cupy(self):
        compat.cupy_device()
        stream = compat.cupy.cuda.Stream(non_blocking=True)
        stream.use()
        self.defer(compat.cupy.cuda.Stream.null.use)
        self.drain = stream.synchronize
        return compat.cupy.empty, (SIZE, compat.cupy.uint8)

    def time_alloc_free(self, api):
        self.body()


class AllocFreeSync(Op):
    """Allocate and free 10 bytes, then synchronise the device (the ``mr.allocate(10); Device().sync()`` of #756),
    every side from the device's stream-ordered memory pool with the same release threshold: ``keep`` (the
    threshold raised to the maximum, as cuda.core's default memory resource does and #756's workaround) or
    ``release`` (the driver's default 0: every sync hands the memory back to the driver)."""

    synchronizes = True
    differs = ("CuPy allocates from its own caching pool, which keeps memory across a sync like 'keep' and has no "
               "'release' form (its MemoryAsyncPool raised OutOfMemoryError with the pool's threshold at 0 on the "
               "H200)")
    unroll = 1  # 5-130 us
    cases = {"pool": ["keep", "release"]}
    needs = {
        "core": ("core.Device.memory_resource", "core.Device.sync", "driver.cuMemPoolSetAttribute"),
        "bindings": ("runtime.cudaMallocAsync", "runtime.cudaFreeAsync", "runtime.cudaDeviceSynchronize",
                     "driver.cuMemPoolSetAttribute"),
        "cupy": ("cupy.empty", "cupy.cuda.runtime.deviceSynchronize"),
    }

    def core(self, pool):
        dev = compat.core_device()
        stream = _core_stream(self)
        mr = dev.memory_resource  # created first: cuda.core raises the threshold as it creates it
        compat.set_release_threshold(self, pool == "keep")

        def alloc_free_sync(allocate=mr.allocate, size=SIZE, stream=stream, sync=dev.sync):
            allocate(size, stream=stream).close(stream)
            sync()

        return alloc_free_sync, ()

    def bindings(self, pool):
        stream = new_bindings_stream(self)
        compat.set_release_threshold(self, pool == "keep")
        rt = compat.runtime

        def alloc_free_sync(
            malloc=rt.cudaMallocAsync, free=rt.cudaFreeAsync, sync=rt.cudaDeviceSynchronize, size=SIZE, stream=stream
        ):
            free(malloc(size, stream)[1], stream)
            sync()

        return alloc_free_sync, ()

    def cupy(self, pool):
        if pool != "keep":
            raise compat.Unavailable("CuPy's caching pool keeps its memory across a sync: no 'release' form")
        compat.cupy_device()

        def alloc_free_sync(empty=compat.cupy.empty, uint8=compat.cupy.uint8, size=SIZE,
                            sync=compat.cupy.cuda.runtime.deviceSynchronize):
            empty(size, uint8)
            sync()

        return alloc_free_sync, ()

    def time_alloc_free_sync(self, api, pool):
        self.body()


class AllocFreeStream(Op):
    """Allocate and free 1024 bytes, stream-ordered, on the default stream or on a stream of its own
    (``explicit``): cuda-python's ``mem_alloc_free`` and ``mem_alloc_async_free_async`` as its cuda.core suite
    times them, ``Device.allocate(1024, stream=...)`` and ``Buffer.close(stream)`` (the default stream passed
    explicitly: 1.x requires a stream); cuda.bindings ``cuMemAllocAsync``/``cuMemFreeAsync`` on the legacy
    default stream (cuda.core's default stream) or its own; CuPy ``cupy.empty`` with the null stream or its own
    current. The device pool's release threshold is raised to the maximum on every side (cuda.core raises it
    itself), so the drain between samples keeps the memory. ``AllocFree`` is the 10-byte form through the memory
    resource and the runtime."""

    queued = True
    differs = "CuPy allocates from its own caching pool; the others from the device's stream-ordered pool"
    cases = {"stream": ["default", "explicit"]}
    needs = {
        "core": ("core.Device.allocate", "core.Device.default_stream", "core.Device.memory_resource",
                 "driver.cuMemPoolSetAttribute"),
        "bindings": ("driver.cuMemAllocAsync", "driver.cuMemFreeAsync", "driver.CU_STREAM_LEGACY",
                     "driver.cuMemPoolSetAttribute"),
        "cupy": ("cupy.empty", "cupy.cuda.Stream.null"),
    }

    def core(self, stream):
        dev = compat.core_device()
        queue = dev.default_stream if stream == "default" else _core_stream(self)
        _ = dev.memory_resource  # created first: cuda.core raises the threshold as it creates it
        compat.set_release_threshold(self, True)
        self.drain = queue.sync

        def alloc_free(allocate=dev.allocate, size=ALLOC_SIZE, stream=queue):
            allocate(size, stream=stream).close(stream)

        return alloc_free, ()

    def bindings(self, stream):
        compat.primary_context()
        queue = compat.bindings_legacy_stream() if stream == "default" else new_bindings_stream(self)
        compat.set_release_threshold(self, True)
        self.drain = lambda: compat.check(compat.driver.cuStreamSynchronize(queue))

        def alloc_free(
            alloc=compat.driver.cuMemAllocAsync, free=compat.driver.cuMemFreeAsync, size=ALLOC_SIZE, stream=queue
        ):
            free(alloc(size, stream)[1], stream)

        return alloc_free, ()

    def cupy(self, stream):
        compat.cupy_device()
        queue = compat.cupy.cuda.Stream.null if stream == "default" else compat.cupy.cuda.Stream(non_blocking=True)
        queue.use()
        self.defer(compat.cupy.cuda.Stream.null.use)
        self.drain = queue.synchronize
        return compat.cupy.empty, (ALLOC_SIZE, compat.cupy.uint8)

    def time_alloc_free_stream(self, api, stream):
        self.body()


class MemcpyHtod(Op):
    """Copy 8 bytes from pageable host memory (a numpy array) to the device with the synchronous API, as
    cuda-python's ``memcpy_htod``: ``cuMemcpyHtoD``, CuPy ``runtime.memcpy`` (``cudaMemcpy``, host to device).
    Synchronous, as there: the call returns when the copy is done. cuda.core has no synchronous copy (its
    ``Buffer.copy_from`` is stream-ordered, from a ``Buffer``: pinned host memory, not a numpy array)."""

    synchronizes = True
    differs = ("CuPy calls the runtime's cudaMemcpy with addresses; cuda.bindings the driver's cuMemcpyHtoD with the "
               "numpy array itself (cuda-python's form), C++ with its address")
    needs = {
        "bindings": ("driver.cuMemcpyHtoD", "numpy.zeros"),
        "cupy": ("cupy.cuda.runtime.memcpy", "cupy.cuda.runtime.memcpyHostToDevice", "cupy.empty"),
    }

    def bindings(self):
        dst = _bindings_alloc(self, COPY_SIZE)
        self.host = compat.numpy.zeros(COPY_SIZE, compat.numpy.uint8)
        return compat.driver.cuMemcpyHtoD, (dst, self.host, COPY_SIZE)

    def cupy(self):
        compat.cupy_device()
        runtime = compat.cupy.cuda.runtime
        self.device = compat.cupy.empty(COPY_SIZE, compat.cupy.uint8)
        self.host = compat.numpy.zeros(COPY_SIZE, compat.numpy.uint8)
        return runtime.memcpy, (self.device.data.ptr, self.host.ctypes.data, COPY_SIZE, runtime.memcpyHostToDevice)

    def time_memcpy_htod(self, api):
        self.body()


class MemcpyDtoh(Op):
    """Copy 8 bytes from the device to pageable host memory (a numpy array) with the synchronous API, as
    cuda-python's ``memcpy_dtoh``: ``cuMemcpyDtoH``, CuPy ``runtime.memcpy`` (``cudaMemcpy``, device to host).
    Synchronous, as there. cuda.core has no synchronous copy (``MemcpyHtod`` says why)."""

    synchronizes = True
    differs = ("CuPy calls the runtime's cudaMemcpy with addresses; cuda.bindings the driver's cuMemcpyDtoH with the "
               "numpy array itself (cuda-python's form), C++ with its address")
    needs = {
        "bindings": ("driver.cuMemcpyDtoH", "numpy.zeros"),
        "cupy": ("cupy.cuda.runtime.memcpy", "cupy.cuda.runtime.memcpyDeviceToHost", "cupy.zeros"),
    }

    def bindings(self):
        src = _bindings_alloc(self, COPY_SIZE)
        self.host = compat.numpy.zeros(COPY_SIZE, compat.numpy.uint8)
        return compat.driver.cuMemcpyDtoH, (self.host, src, COPY_SIZE)

    def cupy(self):
        compat.cupy_device()
        runtime = compat.cupy.cuda.runtime
        self.device = compat.cupy.zeros(COPY_SIZE, compat.cupy.uint8)
        self.host = compat.numpy.zeros(COPY_SIZE, compat.numpy.uint8)
        return runtime.memcpy, (self.host.ctypes.data, self.device.data.ptr, COPY_SIZE, runtime.memcpyDeviceToHost)

    def time_memcpy_dtoh(self, api):
        self.body()


class MemcpyDtod(Op):
    """Copy 8 bytes from device to device: cuda-python's ``memcpy_dtod``, ``cuMemcpyDtoD``; CuPy ``runtime.memcpy``
    (``cudaMemcpy``, device to device); cuda.core ``Buffer.copy_to(dst, stream=...)``. The synchronous API does
    not wait for a device-to-device copy (it queues it on the legacy default stream), so this enqueues GPU work:
    fixed batches, the stream drained between samples."""

    queued = True
    differs = ("cuda.core has no synchronous copy: Buffer.copy_to queues cuMemcpyAsync on a stream of its own; "
               "cuda.bindings and C++ call cuMemcpyDtoD, CuPy the runtime's cudaMemcpy, both on the legacy default "
               "stream")
    needs = {
        "core": ("core.Device.memory_resource",),  # a Buffer's copy_to: checked on the buffers (public Buffer: 0.3)
        "bindings": ("driver.cuMemcpyDtoD", "driver.CU_STREAM_LEGACY"),
        "cupy": ("cupy.cuda.runtime.memcpy", "cupy.cuda.runtime.memcpyDeviceToDevice", "cupy.zeros"),
    }

    def core(self):
        dev = compat.core_device()
        stream = _core_stream(self)
        src, dst = compat.core_allocate(dev, COPY_SIZE, stream), compat.core_allocate(dev, COPY_SIZE, stream)
        self.defer(src.close, stream)
        self.defer(dst.close, stream)
        self.drain = stream.sync
        if not hasattr(src, "copy_to"):
            raise compat.Unavailable(f"{compat.describe('core')} Buffer has no copy_to")
        return src.copy_to, (dst,), {"stream": stream}

    def bindings(self):
        src, dst = _bindings_alloc(self, COPY_SIZE), _bindings_alloc(self, COPY_SIZE)
        legacy = compat.bindings_legacy_stream()
        self.drain = lambda: compat.check(compat.driver.cuStreamSynchronize(legacy))
        return compat.driver.cuMemcpyDtoD, (dst, src, COPY_SIZE)

    def cupy(self):
        compat.cupy_device()
        runtime = compat.cupy.cuda.runtime
        self.src = compat.cupy.zeros(COPY_SIZE, compat.cupy.uint8)
        self.dst = compat.cupy.empty(COPY_SIZE, compat.cupy.uint8)
        self.drain = compat.cupy.cuda.Stream.null.synchronize
        return runtime.memcpy, (self.dst.data.ptr, self.src.data.ptr, COPY_SIZE, runtime.memcpyDeviceToDevice)

    def time_memcpy_dtod(self, api):
        self.body()


class MemoryResourceCreate(Op):
    """Construct ``DeviceMemoryResource(0)`` (#1274)."""

    needs = {"core": ("core.DeviceMemoryResource",)}

    def core(self):
        compat.core_device()
        return compat.core.DeviceMemoryResource, (0,)

    def time_memory_resource_create(self, api):
        self.body()


class PointerGetAttribute(Op):
    """Ask the driver for one attribute (memory type) of a device pointer."""

    version = "cd4e74f63eca05eb"  # the timed work as before `differs` was written down
    differs = ("CuPy has no one-attribute call here: runtime.pointerGetAttributes (cudaPointerGetAttributes) fills "
               "every field and builds a PointerAttributes; cuda.bindings and C++ ask cuPointerGetAttribute for the "
               "memory type alone")
    needs = {
        "bindings": ("driver.cuPointerGetAttribute",),
        "cupy": ("cupy.cuda.runtime.pointerGetAttributes",),
    }

    def bindings(self):
        ptr = _bindings_alloc(self, 1 << 18)
        attr = compat.driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE
        return compat.driver.cuPointerGetAttribute, (attr, ptr)

    def cupy(self):
        compat.cupy_device()
        array = compat.cupy.empty(1 << 18, compat.cupy.uint8)
        return compat.cupy.cuda.runtime.pointerGetAttributes, (array.data.ptr,)

    def time_pointer_get_attribute(self, api):
        self.body()


class PointerGetAttributes(Op):
    """Ask the driver for four attributes of a device pointer in one ``cuPointerGetAttributes`` call."""

    needs = {"bindings": ("driver.cuPointerGetAttributes",)}

    def bindings(self):
        ptr = _bindings_alloc(self, 1 << 18)
        attr = compat.driver.CUpointer_attribute
        attrs = (
            attr.CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            attr.CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
            attr.CU_POINTER_ATTRIBUTE_HOST_POINTER,
            attr.CU_POINTER_ATTRIBUTE_BUFFER_ID,
        )
        return compat.driver.cuPointerGetAttributes, (len(attrs), attrs, ptr)

    def time_pointer_get_attributes(self, api):
        self.body()


def _bindings_alloc(op, size):
    compat.primary_context()
    ptr = compat.check(compat.driver.cuMemAlloc(size))
    op.defer(compat.driver.cuMemFree, ptr)
    return ptr
