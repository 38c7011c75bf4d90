"""TMA descriptors: tiled (seed #659: 5.9 us from Python against 0.16 us from C++), im2col and wide im2col
(cuda-python's tensormap benchmarks). Needs compute capability 9.0 (wide im2col: what the driver takes)."""

from . import _compat as compat
from ._op import Op


class TensorMapEncodeTiled(Op):
    """Encode a 2-D tiled tensor map over a 128x128 float32 array with 64x64 boxes:
    ``cuTensorMapEncodeTiled``, ``StridedMemoryView.as_tensor_map`` (cuda.core, where it exists)."""

    needs = {
        "core": ("utils.StridedMemoryView.as_tensor_map", "cupy.empty"),
        "bindings": ("driver.cuTensorMapEncodeTiled",),
    }

    def core(self):
        compat.require_compute_capability(9, 0, "TMA")
        compat.cupy_device()
        self.array = compat.cupy.empty((128, 128), compat.cupy.float32)
        fn, args = compat.core_memory_view_call(self.array, -1)
        view = fn(*args)
        return view.as_tensor_map, ((64, 64),)

    def bindings(self):
        compat.require_compute_capability(9, 0, "TMA")
        driver = compat.driver
        compat.primary_context()
        ptr = compat.check(driver.cuMemAlloc(128 * 128 * 4))
        self.defer(driver.cuMemFree, ptr)
        u32, u64 = driver.cuuint32_t, driver.cuuint64_t
        return driver.cuTensorMapEncodeTiled, (
            driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            2,
            ptr,
            (u64(128), u64(128)),
            (u64(128 * 4),),
            (u32(64), u32(64)),
            (u32(1), u32(1)),
            driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
            driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
            driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )

    def time_tensor_map_encode_tiled(self, api):
        self.body()


class _Im2col(Op):
    """Shared setup of the im2col encodes: cuda-python's fp16 tensor of 32 channels x 64 x 64 in a 1 MiB
    allocation, and a first encode that must succeed (the driver and GPU decide whether the layout is
    supported: the error it returns skips the case)."""

    def _tensor(self):
        compat.require_compute_capability(9, 0, "TMA")
        driver = compat.driver
        compat.primary_context()
        ptr = compat.check(driver.cuMemAlloc(1 << 20))
        self.defer(driver.cuMemFree, ptr)
        u64 = driver.cuuint64_t
        return ptr, (u64(32), u64(64), u64(64)), (u64(32 * 2), u64(32 * 64 * 2))

    def _probed(self, fn, args):
        try:
            err = fn(*args)[0]
        except RuntimeError as exc:  # cuda.bindings newer than the driver: the entry point is missing
            raise compat.Unavailable(f"{fn.__name__}: {exc}") from exc
        if int(err) != 0:
            raise compat.Unavailable(f"{fn.__name__} returned {err!r} here (this GPU or driver does not take it)")
        return fn, args


class TensorMapEncodeIm2col(_Im2col):
    """Encode a 3-D im2col tensor map (fp16, 32 channels and 32 pixels per column, pixel box corners 0):
    cuda-python's ``tensor_map_encode_im2col``, ``cuTensorMapEncodeIm2col``. cuda.core has no public im2col
    form (``as_tensor_map`` is tiled)."""

    needs = {"bindings": ("driver.cuTensorMapEncodeIm2col",)}

    def bindings(self):
        driver = compat.driver
        ptr, dims, strides = self._tensor()
        return self._probed(driver.cuTensorMapEncodeIm2col, (
            driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            3,
            ptr,
            dims,
            strides,
            (0,),
            (0,),
            32,
            32,
            (driver.cuuint32_t(1),) * 3,
            driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
            driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
            driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        ))

    def time_tensor_map_encode_im_2col(self, api):
        self.body()


class TensorMapEncodeIm2colWide(_Im2col):
    """Encode the same tensor as a wide im2col map (mode W, 128-byte swizzle, width corners 0): cuda-python's
    ``tensor_map_encode_im2col_wide``, ``cuTensorMapEncodeIm2colWide`` (cuda.bindings 12.8+). cuda.core's
    documentation gives compute capability 10.0 and later for it: on the H200 (9.0) the driver's refusal is
    expected to skip it."""

    needs = {"bindings": ("driver.cuTensorMapEncodeIm2colWide", "driver.CUtensorMapIm2ColWideMode")}

    def bindings(self):
        driver = compat.driver
        ptr, dims, strides = self._tensor()
        return self._probed(driver.cuTensorMapEncodeIm2colWide, (
            driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            3,
            ptr,
            dims,
            strides,
            0,
            0,
            32,
            32,
            (driver.cuuint32_t(1),) * 3,
            driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            driver.CUtensorMapIm2ColWideMode.CU_TENSOR_MAP_IM2COL_WIDE_MODE_W,
            driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
            driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
            driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        ))

    def time_tensor_map_encode_im_2col_wide(self, api):
        self.body()
