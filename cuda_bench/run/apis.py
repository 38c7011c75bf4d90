"""List every benchmark case of the suite and what it resolves to in this environment, without asv.

    python -m cuda_bench.run.apis                 # resolve and run each setup + one call
    python -m cuda_bench.run.apis --resolve-only  # names only: no CUDA work at all
    python -m cuda_bench.run.apis --json out.json

For each case it prints ``ok`` (the API exists and setup ran), ``ok (api)`` (the API exists; setup
was not run, with --resolve-only) or ``skip: <reason>``. Run it in the environment you want to
check, from the project root. Exit status 1 when a case fails with anything but a skip (a bug in the
suite).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

from cuda_bench.foundations.suite import cases


def operations():
    """{case name: Case} for the suite's operations (``benchmarks._op.Op`` subclasses), in file
    order."""
    from benchmarks._op import Op

    return {name: case for name, case in cases().items() if issubclass(case.cls, Op)}


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
    parser.add_argument(
        "--resolve-only", action="store_true", help="check names only; no CUDA work"
    )
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
        flags = [
            flag
            for flag, on in (("queued", case.cls.queued), ("synchronizes", case.cls.synchronizes))
            if on
        ]
        rows.append({"benchmark": name, "api": case.params[0], "status": status, "flags": flags})
        print(f"{name:80s} {status}{'  [' + ', '.join(flags) + ']' if flags else ''}", flush=True)
    versions = {api: compat.describe(api) for api in compat.LIBRARIES}
    print("versions:", ", ".join(versions.values()))
    if args.json:
        args.json.write_text(json.dumps({"versions": versions, "rows": rows}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
