"""Events: create+destroy, record, query, synchronise (seeds #658 #677 #709). Timing is disabled everywhere."""

from operator import attrgetter

from . import _compat as compat
from ._op import Op
from .bench_stream import new_bindings_stream


class EventCreate(Op):
    """Create and destroy an event with timing disabled (CuPy's default enables timing; set off here)."""

    needs = {
        "core": ("core.Device.create_event", "core.EventOptions"),
        "bindings": ("driver.cuEventCreate", "driver.cuEventDestroy"),
        "cupy": ("cupy.cuda.Event",),
    }

    def core(self):
        def create_close(
            create=compat.core_device().create_event,
            options=compat.core_event_options(),
        ):
            create(options).close()

        return create_close, ()

    def bindings(self):
        compat.primary_context()

        def create_destroy(
            create=compat.driver.cuEventCreate,
            destroy=compat.driver.cuEventDestroy,
            flags=compat.driver.CUevent_flags.CU_EVENT_DISABLE_TIMING,
        ):
            destroy(create(flags)[1])

        return create_destroy, ()

    def cupy(self):
        compat.cupy_device()

        def create_destroy(create=compat.cupy.cuda.Event):
            create(False, True)  # block=False, disable_timing=True; destroyed as the object is dropped

        return create_destroy, ()

    def time_event_create(self, api):
        self.body()


class _EventOp(Op):
    """Shared setup: one stream and one (completed) event per library."""

    def _core_pair(self):
        dev = compat.core_device()
        stream = dev.create_stream()
        event = compat.core_event(dev, stream)
        self.defer(stream.close)
        self.defer(event.close)
        stream.record(event)
        stream.sync()
        return stream, event

    def _bindings_pair(self):
        driver = compat.driver
        stream = new_bindings_stream(self)
        event = compat.check(driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING))
        self.defer(driver.cuEventDestroy, event)
        compat.check(driver.cuEventRecord(event, stream))
        compat.check(driver.cuStreamSynchronize(stream))
        return stream, event

    def _cupy_pair(self):
        compat.cupy_device()
        stream = compat.cupy.cuda.Stream(non_blocking=True)
        event = compat.cupy.cuda.Event(False, True)
        event.record(stream)
        stream.synchronize()
        return stream, event


class EventRecord(_EventOp):
    """Record an event on a stream. Enqueues work: fixed batches, stream drained between samples."""

    queued = True
    needs = {
        "core": ("core.Stream.record",),
        "bindings": ("driver.cuEventRecord",),
        "cupy": ("cupy.cuda.Event.record",),
    }

    def core(self):
        stream, event = self._core_pair()
        self.drain = stream.sync
        return stream.record, (event,)

    def bindings(self):
        stream, event = self._bindings_pair()
        self.drain = lambda: compat.check(compat.driver.cuStreamSynchronize(stream))
        return compat.driver.cuEventRecord, (event, stream)

    def cupy(self):
        stream, event = self._cupy_pair()
        self.drain = stream.synchronize
        return event.record, (stream,)

    def time_event_record(self, api):
        self.body()


class EventQuery(_EventOp):
    """Ask whether a completed event is done: ``Event.is_done``, ``cuEventQuery``, ``cupy Event.done``."""

    needs = {
        "core": ("core.Event.is_done",),
        "bindings": ("driver.cuEventQuery",),
        "cupy": ("cupy.cuda.Event.done",),
    }

    def core(self):
        return attrgetter("is_done"), (self._core_pair()[1],)

    def bindings(self):
        return compat.driver.cuEventQuery, (self._bindings_pair()[1],)

    def cupy(self):
        return attrgetter("done"), (self._cupy_pair()[1],)

    def time_event_query(self, api):
        self.body()


class EventSync(_EventOp):
    """Synchronise on a completed event: the fixed cost of a wait with nothing to wait for."""

    synchronizes = True
    needs = {
        "core": ("core.Event.sync",),
        "bindings": ("driver.cuEventSynchronize",),
        "cupy": ("cupy.cuda.Event.synchronize",),
    }

    def core(self):
        return self._core_pair()[1].sync, ()

    def bindings(self):
        return compat.driver.cuEventSynchronize, (self._bindings_pair()[1],)

    def cupy(self):
        return self._cupy_pair()[1].synchronize, ()

    def time_event_sync(self, api):
        self.body()
