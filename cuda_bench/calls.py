"""What each case calls, in the words a maintainer types: ``Device.set_current`` for
``bench_device.SetCurrent.time_set_current('core')``, ``cuCtxSetCurrent`` for its cuda.bindings
form. The suite declares it once, per operation and library (``benchmarks._op.Op.needs``); every
page and report reads it from here.
"""

from __future__ import annotations

import functools
import sys

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
    try:
        from benchmarks._op import Op
        from cuda_bench import suite

        out = {}
        for module, cls in suite.benchmark_classes():
            if not issubclass(cls, Op):
                continue
            for method in suite.timed_methods(cls):
                out[f"{module}.{cls.__name__}.{method}"] = {
                    api: tuple(
                        dict.fromkeys(_typed(n) for n in names if not n.startswith("numpy."))
                    )
                    for api, names in cls.needs.items()
                }
        return out
    except Exception as exc:  # the pages still stand without the names
        print(f"calls: no call names from the suite ({type(exc).__name__}: {exc})", file=sys.stderr)
        return {}


def _typed(name):
    return next((name[len(m) :] for m in MODULES if name.startswith(m)), name)


def of(name):
    """What one case (``bench_device.SetCurrent.time_set_current('core')``) uses, as
    :func:`declared` names it: ("Device.set_current",); () for a case the suite does not declare (a
    control, a benchmark it has dropped)."""
    from cuda_bench.names import library_of, split_case

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
