"""``StridedMemoryView`` from a CuPy array (seeds #449 #838): DLPack exchange plus shape/stride objects."""

from . import _compat as compat
from ._op import Op


class StridedMemoryViewCreate(Op):
    """View a 1024-element float32 CuPy array: ``StridedMemoryView.from_dlpack`` (the constructor before 0.5)."""

    needs = {"core": ("utils.StridedMemoryView", "cupy.empty")}

    def core(self):
        compat.cupy_device()
        stream = compat.core_device().create_stream()
        self.defer(stream.close)
        self.array = compat.cupy.empty(1024, compat.cupy.float32)
        return compat.core_memory_view_call(self.array, int(stream.handle))

    def time_strided_memory_view_create(self, api):
        self.body()
