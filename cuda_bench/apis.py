"""List every benchmark case of the suite and what it resolves to in this environment, without asv.

    python -m cuda_bench.apis                 # resolve and run each setup + one call
    python -m cuda_bench.apis --resolve-only  # names only: no CUDA work at all
    python -m cuda_bench.apis --json out.json

For each case it prints ``ok`` (the API exists and setup ran), ``ok (api)`` (the API exists; setup was not
run, with --resolve-only) or ``skip: <reason>``. Run it in the environment you want to check, from the
project root. Exit status 1 when a case fails with anything but a skip (a bug in the suite).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import traceback
from pathlib import Path

from cuda_bench.suite import cases


def operations():
    """{case name: Case} for the suite's operations (``benchmarks._op.Op`` subclasses), in file order."""
    from benchmarks._op import Op

    return {name: case for name, case in cases().items() if issubclass(case.cls, Op)}


#: the parts of a ``needs`` name that say which module it is in, left out where a page names the
#: call (the library column says it): ``core.Device.set_current`` -> ``Device.set_current``,
#: ``driver.cuCtxSetCurrent`` -> ``cuCtxSetCurrent``; names under ``numpy`` are what a form builds
#: its arguments with, not cuda-python's
MODULES = ("core.", "driver.", "runtime.", "nvrtc.", "pathfinder.")


@functools.cache
def calls():
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
                    api: tuple(dict.fromkeys(_typed(n) for n in names
                                             if not n.startswith("numpy.")))
                    for api, names in cls.needs.items()}
        return out
    except Exception as exc:  # the pages still stand without the names
        print(f"apis: no call names from the suite ({type(exc).__name__}: {exc})",
              file=sys.stderr)
        return {}


def _typed(name):
    return next((name[len(m):] for m in MODULES if name.startswith(m)), name)


def calls_of(name):
    """What one case (``bench_device.SetCurrent.time_set_current('core')``) uses, as
    :func:`calls` names it: ("Device.set_current",); () for a case the suite does not declare (a
    control, a benchmark it has dropped)."""
    from cuda_bench.names import library_of, split_case

    try:
        benchmark = split_case(name)[0]
    except ValueError:  # not a case name (a record's text): it declares nothing
        return ()
    return calls().get(benchmark, {}).get(library_of(name), ())


def named(name):
    """A case as the Markdown reports name it: its name as code, then what it uses
    (:func:`calls_of`):
    ```bench_device.SetCurrent.time_set_current('core')` (`Device.set_current`)``."""
    uses = calls_of(name)
    return f"`{name}`" + (f" ({', '.join(f'`{n}`' for n in uses)})" if uses else "")


def check(case, resolve_only):
    from benchmarks import _compat as compat

    api = case.params[0]
    if resolve_only:
        compat.resolve_all(case.cls.needs[api])
        return "ok (api)"
    op = case.cls()
    op.setup(*case.params)
    try:
        op.body()
    finally:
        op.teardown(*case.params)
    return "ok"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolve-only", action="store_true", help="check names only; no CUDA work")
    parser.add_argument("--json", type=Path, help="also write the table as JSON")
    args = parser.parse_args(argv)
    from benchmarks import _compat as compat

    rows, failed = [], False
    for name, case in operations().items():
        try:
            status = check(case, args.resolve_only)
        except compat.Unavailable as exc:
            status = f"skip: {exc}"
        except Exception:
            status = "FAIL: " + traceback.format_exc().strip().splitlines()[-1]
            failed = True
        flags = [flag for flag, on in (("queued", case.cls.queued), ("synchronizes", case.cls.synchronizes)) if on]
        rows.append({"benchmark": name, "api": case.params[0], "status": status, "flags": flags})
        print(f"{name:80s} {status}{'  [' + ', '.join(flags) + ']' if flags else ''}", flush=True)
    versions = {api: compat.describe(api) for api in compat.LIBRARIES}
    print("versions:", ", ".join(versions.values()))
    if args.json:
        args.json.write_text(json.dumps({"versions": versions, "rows": rows}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
