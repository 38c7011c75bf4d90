"""List every benchmark of the suite and what it resolves to in this environment, without asv.

For each operation and library it prints ``ok`` (the API exists and setup ran), ``ok (api)`` (the API
exists; setup was not run, with --resolve-only) or ``skip: <reason>``. Run it in the environment you want to
check, from the project root::

    python scripts/apis.py                 # resolve and run each setup + one call
    python scripts/apis.py --resolve-only  # names only: no CUDA work at all
    python scripts/apis.py --json out.json

Exit status 1 when a benchmark fails with anything but a skip (a bug in the suite).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import itertools
import json
import pkgutil
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import benchmarks  # noqa: E402
from benchmarks import _compat as compat  # noqa: E402
from benchmarks._op import Op  # noqa: E402


def operations():
    """(module name, class) for every Op subclass asv would discover, in file order."""
    for info in pkgutil.iter_modules(benchmarks.__path__):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for name, cls in vars(module).items():
            if inspect.isclass(cls) and issubclass(cls, Op) and cls.__module__ == module.__name__ and not name.startswith("_"):
                yield info.name, cls


def check(cls, params, resolve_only):
    api = params[0]
    if resolve_only:
        compat.resolve_all(cls.needs[api])
        return "ok (api)"
    op = cls()
    op.setup(*params)
    try:
        op.fn(*op.args)
    finally:
        op.teardown(*params)
    return "ok"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolve-only", action="store_true", help="check names only; no CUDA work")
    parser.add_argument("--json", type=Path, help="also write the table as JSON")
    args = parser.parse_args(argv)

    rows, failed = [], False
    for module, cls in operations():
        for params in itertools.product(*cls.params):
            name = f"{module}.{cls.__name__}({', '.join(map(repr, params))})"
            try:
                status = check(cls, params, args.resolve_only)
            except compat.Unavailable as exc:
                status = f"skip: {exc}"
            except Exception:
                status = "FAIL: " + traceback.format_exc().strip().splitlines()[-1]
                failed = True
            flags = [flag for flag, on in (("queued", cls.queued), ("synchronizes", cls.synchronizes)) if on]
            rows.append({"benchmark": name, "api": params[0], "status": status, "flags": flags})
            print(f"{name:70s} {status}{'  [' + ', '.join(flags) + ']' if flags else ''}", flush=True)
    versions = {api: compat.describe(api) for api in compat.LIBRARIES}
    print("versions:", ", ".join(versions.values()))
    if args.json:
        args.json.write_text(json.dumps({"versions": versions, "rows": rows}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
