"""Stage 0: processes and files, as every stage handles them. A process that dies with the one that
started it; SIGTERM taken as Ctrl-C is; a process group stopped whole, gracefully then for good;
tasks forked one per core, each in a process group of its own, that an interrupt stops together; a
file written whole or not at all; a command's own temporary folder, removed when it ends. Standard
library only: the build step and the workers run it inside benchmark environments.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def die_with_parent():
    """Have the kernel kill this process when the process that started it dies (Linux
    ``PR_SET_PDEATHSIG``), so that a controller killed outright (SIGKILL) leaves no pair driver or
    worker running; elsewhere, nothing."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Interrupted(KeyboardInterrupt):
    """SIGTERM, raised as Ctrl-C is: the same clean stop."""


#: [whether an interrupt came]: set by the handlers :func:`stop_on_sigterm` installs, before they
#: raise. Python prints and drops what a signal handler raises inside an at-fork hook or a
#: finalizer, and the logging module releases its lock in a hook after every fork: an interrupt that
#: lands there is lost, and the command would run on until a time limit's SIGKILL. Where the
#: command forks from its main thread it calls :func:`check_interrupted` after. A plain value, not
#: an Event: a second signal inside the first's ``Event.set`` would wait on its lock for ever.
SIGNALLED = [False]


def stop_on_sigterm():
    """From now on SIGTERM stops this process as Ctrl-C does (:class:`Interrupted`), so every
    ``finally`` runs; both are noted in :data:`SIGNALLED`."""
    SIGNALLED[0] = False

    def stop(signum, frame):
        SIGNALLED[0] = True
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Interrupted(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, stop)


def check_interrupted():
    """Raise the interrupt whose handler could not (:data:`SIGNALLED`): after a fork."""
    if SIGNALLED[0]:
        raise Interrupted("an interrupt that arrived while a process was started")


# seconds a command started in a process group of its own (pip wheel and the compilers under it) has
# to end on an interrupt before it is killed; a build step gets that and as long again to remove
# what it made (:func:`stop_builds`)
GRACE = 3


def stop_groups(procs, grace):
    """End ``procs``, each the leader of a process group of its own, with everything in their
    groups: SIGTERM (a build step then stops what it runs and removes its temporary folders),
    SIGKILL to what is left after ``grace`` seconds or on a second interrupt."""
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    try:
        for proc in procs:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
    finally:  # also on a second Ctrl-C: no more grace
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()


def write_whole(path, text):
    """``text`` into ``path`` whole or not at all: a temporary file beside it, then a rename. A
    reader never sees half of it; a failed write leaves the old file as it was and no temporary one.
    The file keeps its mode; a new one gets the mode ``open`` gives (0666 less the umask, applied by
    the kernel: builds run in threads, so the umask is never set to be read)."""
    path = Path(path)
    temp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.partial")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w") as f:
            if path.exists():
                os.fchmod(f.fileno(), path.stat().st_mode & 0o777)
            f.write(text)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def temporary_folder():
    """A folder of this command's own in the system's temporary folder, the temporary folder
    (``TMPDIR``) of this process and of every process it starts (asv, pip, the builds, the
    compilers, the workers), removed with all in it when the command ends, however it ends: what pip
    or asv leave there when an interrupt stops them (``pip-install-*``, ``pip-build-tracker-*``)
    goes with it. Short, beside the system's: asv's forkserver puts a socket in it."""
    folder = tempfile.mkdtemp(prefix="cuda-bench-")
    before = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = folder, folder
    try:
        yield Path(folder)
    finally:
        if before[0] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before[0]
        tempfile.tempdir = before[1]
        remove(folder)


def remove(folder):
    """``folder`` and all in it, also where a process that was just killed still left a file in
    it."""
    for _ in range(5):
        shutil.rmtree(folder, ignore_errors=True)
        if not Path(folder).exists():
            return
        time.sleep(0.2)


def map_stoppable(stop, fn, items, workers):
    """``fn`` of each of ``items`` on ``workers`` threads, the results in their order. An interrupt
    (or any error) sets ``stop``, which ``fn`` reads between its steps, and waits for every thread
    to end; ``stop`` is clear again when this returns."""
    pool = ThreadPoolExecutor(workers)
    try:
        return list(pool.map(fn, items))
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        stop.clear()


def _driver(task, i, args, core, messages):
    """A forked task process: its own process group (Ctrl-C at a terminal reaches the controller
    alone, which stops the group: this driver and the workers it starts), killed with the
    controller, its result sent back."""
    os.setpgrp()
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        result = task(i, *args, core, lambda name: messages.put(("case", i, name)))
        messages.put(("result", i, result))
    except BaseException as exc:  # noqa: BLE001 - whatever it was, the controller must hear of it
        messages.put(("failed", i, f"{type(exc).__name__}: {exc}"))


def in_parallel(task, args, count, cores, total, progress, label, threads=False):
    """``task(i, *args, core, done)`` for i in range(count), one per core of ``cores`` at a time,
    each in a process forked from this one (threads for tests); a progress line every 15 s from the
    cases the tasks report with ``done(name)``. The tasks' results, in order; a task that failed (it
    raised, or its process died) is a RuntimeError in its place.

    An interrupt (Ctrl-C, or SIGTERM after :func:`stop_on_sigterm`) or any error here kills every
    task's process group (its driver and the workers it started) before it propagates: nothing is
    left running and nothing waits on a task that will never finish. A task process that dies
    without a result is an error."""
    ctx = multiprocessing.get_context("fork")
    messages = queue.Queue() if threads else ctx.Queue()
    free, pending, running, results = list(cores), list(range(count)), {}, {}
    start = last = time.monotonic()
    finished, said_all = 0, False

    def launch(i, core):
        if threads:
            worker = threading.Thread(
                target=_in_thread, args=(task, i, args, core, messages), daemon=True
            )
        else:
            worker = ctx.Process(target=_driver, args=(task, i, args, core, messages))
        worker.start()
        return worker

    def handle(message):
        nonlocal finished
        kind, i, value = message
        if kind == "case":
            finished += 1
        elif kind == "result":
            results[i] = value
        else:
            results[i] = RuntimeError(f"{label} task {i} failed: {value}")

    try:
        while pending or running:
            while pending and free:
                i, core = pending.pop(0), free.pop(0)
                running[i] = (launch(i, core), core)
                check_interrupted()
            try:
                handle(messages.get(timeout=1))
            except queue.Empty:
                pass
            for i, (worker, core) in list(running.items()):
                if worker.is_alive():
                    continue
                if i not in results:  # its last messages may still be on their way
                    try:
                        while i not in results:
                            handle(messages.get(timeout=2))
                    except queue.Empty:
                        results[i] = RuntimeError(
                            f"{label} task {i} died (exit {getattr(worker, 'exitcode', '?')})"
                        )
                if not threads:
                    worker.join()
                free.append(core)
                del running[i]
            now = time.monotonic()
            if finished and (now - last >= 15 or (finished == total and not said_all)):
                last, said_all = now, finished == total
                progress(
                    f"{label}: {finished}/{total} ({finished / total:.0%}), {now - start:.0f} s, "
                    f"about {(now - start) / finished * (total - finished):.0f} s left"
                )
    except BaseException:
        if not threads:
            _kill([worker for worker, _ in running.values()])
        raise
    # a task that failed is its exception: the caller decides
    return [results[i] for i in range(count)]


def _in_thread(task, i, args, core, messages):
    """A task in a thread (tests), its result or failure sent back as a task process sends its."""
    try:
        result = task(i, *args, core, lambda name: messages.put(("case", i, name)))
        messages.put(("result", i, result))
    except BaseException as exc:  # noqa: BLE001 - whatever it was, the controller must hear of it
        messages.put(("failed", i, f"{type(exc).__name__}: {exc}"))


def _kill(workers):
    """Each task process's group killed (the driver and the workers it started), then waited
    for."""
    for worker in workers:
        try:
            os.killpg(worker.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            worker.kill()
    for worker in workers:
        worker.join(timeout=10)
