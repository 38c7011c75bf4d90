"""What each case calls, in the words a maintainer types: ``Device.set_current`` for
``bench_device.SetCurrent.time_set_current('core')``, ``cuCtxSetCurrent`` for its cuda.bindings
form. The suite declares it once, per operation and library (``benchmarks._op.Op.needs``); every
page and report reads it from here.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path

from cuda_bench.foundations import process
from cuda_bench.foundations.paths import BENCHMARKS, WORK

#: the parts of a ``needs`` name that say which module it is in, left out where a page names the
#: call (the library column says it): ``core.Device.set_current`` -> ``Device.set_current``,
#: ``driver.cuCtxSetCurrent`` -> ``cuCtxSetCurrent``; names under ``numpy`` are what a form builds
#: its arguments with, not cuda-python's
MODULES = ("core.", "driver.", "runtime.", "nvrtc.", "pathfinder.")


@functools.cache
def declared():
    """{benchmark: {api: (name, ...)}}: what each form of each operation uses, as the suite
    declares it (``benchmarks._op.Op.needs``), in the words a maintainer types (:data:`MODULES`);
    {} when the suite cannot be imported here."""
    return {
        name: {api: tuple(names) for api, names in said["needs"].items()}
        for name, said in suite_said().items()
    }


@functools.cache
def suite_said(benchmark_dir=BENCHMARKS):
    """{benchmark: {"needs": {api: [name, ...]}, "differs": reason, "version": asv's version}} of
    every timed benchmark of the suite, as its classes say (``benchmarks._op.Op``); {} when the
    suite cannot be imported here. Importing the suite takes a third of a second (each class hashes
    its own source for its version), so what it says is kept in ``.asv/suite-said.json`` under the
    digest of the suite's files, and read from there while they are unchanged."""
    files = sorted(Path(benchmark_dir).glob("*.py"))
    digest = hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in files)).hexdigest()
    kept = WORK / "suite-said.json"
    try:
        found = json.loads(kept.read_text())
        if found.get("digest") == digest:
            return found["said"]
    except (OSError, ValueError, AttributeError, KeyError):
        pass
    try:
        from cuda_bench.foundations import suite

        classes = list(suite.benchmark_classes(benchmark_dir))
        from benchmarks._op import Op  # importable once the suite is

        said = {}
        for module, cls in classes:
            for method in suite.timed_methods(cls):
                needs = (
                    {
                        api: list(
                            dict.fromkeys(_typed(n) for n in names if not n.startswith("numpy."))
                        )
                        for api, names in cls.needs.items()
                    }
                    if issubclass(cls, Op)
                    else {}
                )
                said[f"{module}.{cls.__name__}.{method}"] = {
                    "needs": needs,
                    "differs": getattr(cls, "differs", ""),
                    "version": getattr(cls, "version", None),
                }
    except Exception as exc:  # the pages still stand without what the suite says
        print(f"calls: nothing from the suite ({type(exc).__name__}: {exc})", file=sys.stderr)
        return {}
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        process.write_whole(kept, json.dumps({"digest": digest, "said": said}))
    except OSError:  # a read-only checkout: said, not kept
        pass
    return said


def _typed(name):
    return next((name[len(m) :] for m in MODULES if name.startswith(m)), name)


def of(name):
    """What one case (``bench_device.SetCurrent.time_set_current('core')``) uses, as
    :func:`declared` names it: ("Device.set_current",); () for a case the suite does not declare (a
    control, a benchmark it has dropped)."""
    from cuda_bench.foundations.names import library_of, split_case

    try:
        benchmark = split_case(name)[0]
    except ValueError:  # not a case name (a record's text): it declares nothing
        return ()
    return declared().get(benchmark, {}).get(library_of(name), ())


def named(name):
    """A case as the Markdown reports name it: its name as code, then what it uses
    (:func:`of`):
    ```bench_device.SetCurrent.time_set_current('core')` (`Device.set_current`)``."""
    uses = of(name)
    return f"`{name}`" + (f" ({', '.join(f'`{n}`' for n in uses)})" if uses else "")
