"""Streams: create+destroy, query and synchronise an idle stream (seeds #658 #677 #709; cuda-python's stream
benchmarks)."""

from operator import attrgetter

from . import _compat as compat
from ._op import Op


class StreamCreate(Op):
    """Create and destroy a non-blocking stream. CuPy destroys it when the object is dropped, inside the call."""

    needs = {
        "core": ("core.Device.create_stream", "core.Stream.close"),
        "bindings": ("driver.cuStreamCreate", "driver.cuStreamDestroy"),
        "cupy": ("cupy.cuda.Stream",),
    }

    def core(self):
        def create_close(create=compat.core_device().create_stream):
            create().close()

        return create_close, ()

    def bindings(self):
        compat.primary_context()

        def create_destroy(
            create=compat.driver.cuStreamCreate,
            destroy=compat.driver.cuStreamDestroy,
            flags=compat.driver.CUstream_flags.CU_STREAM_NON_BLOCKING,
        ):
            destroy(create(flags)[1])

        return create_destroy, ()

    def cupy(self):
        compat.cupy_device()

        def create_destroy(create=compat.cupy.cuda.Stream):
            create(False, True)  # null=False, non_blocking=True; destroyed as the object is dropped

        return create_destroy, ()

    def time_stream_create(self, api):
        self.body()


class StreamSync(Op):
    """Synchronise an idle stream: the fixed cost of a ``sync()`` that has nothing to wait for."""

    synchronizes = True
    needs = {
        "core": ("core.Stream.sync",),
        "bindings": ("driver.cuStreamSynchronize",),
        "cupy": ("cupy.cuda.Stream.synchronize",),
    }

    def core(self):
        stream = compat.core_device().create_stream()
        self.defer(stream.close)
        return stream.sync, ()

    def bindings(self):
        stream = new_bindings_stream(self)
        return compat.driver.cuStreamSynchronize, (stream,)

    def cupy(self):
        compat.cupy_device()
        return compat.cupy.cuda.Stream(non_blocking=True).synchronize, ()

    def time_stream_sync(self, api):
        self.body()


class StreamQuery(Op):
    """Ask whether an idle stream is done: ``cuStreamQuery``, ``cupy Stream.done`` (cuda-python's ``stream_query``).
    cuda.core has no stream query (``Event.is_done`` is ``EventQuery``)."""

    needs = {
        "bindings": ("driver.cuStreamQuery",),
        "cupy": ("cupy.cuda.Stream.done",),
    }

    def bindings(self):
        stream = new_bindings_stream(self)
        return compat.driver.cuStreamQuery, (stream,)

    def cupy(self):
        compat.cupy_device()
        return attrgetter("done"), (compat.cupy.cuda.Stream(non_blocking=True),)

    def time_stream_query(self, api):
        self.body()


def new_bindings_stream(op):
    """A non-blocking stream through cuda.bindings, destroyed in the op's teardown."""
    compat.primary_context()
    driver = compat.driver
    stream = compat.check(driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING))
    op.defer(driver.cuStreamDestroy, stream)
    return stream
