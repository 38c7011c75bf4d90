"""TMA descriptors (seed #659: 5.9 us from Python against 0.16 us from C++). Needs compute capability 9.0."""

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
