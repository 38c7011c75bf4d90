"""Stage 4, compare: what each part of a plan (``cuda_bench.compare.plan``) costs on one machine, in
seconds: a window's pass per case and build, asv's run and a paired step per case, the counting
pass per case and commit, each from the machine's own records where it has some, else from
:data:`DEFAULTS`; a package's build, scaled by the machine's cores.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass
from pathlib import Path

from cuda_bench.compare.settings import Settings
from cuda_bench.foundations import suite
from cuda_bench.foundations.names import is_cold_start
from cuda_bench.foundations.paths import result_files
from cuda_bench.results import asv_files, records

#: seconds when this machine has no record to say: per case of the suite for asv's run (H200: 75-84
#: s for 153 cases), a whole-suite paired step (H100: 116 s for 164 cases) and the counting pass;
#: per package build on 16 cores (cuda_core 45-55 s on the H200; cuda_bindings 377 s on 2 cores, so
#: about a fifth of that on 16), scaled by cores
DEFAULTS = {
    "asv": 0.55,
    "step": 0.75,
    # per case and build of a window's pass: a paired step's per case, for its two builds
    "window": 0.375,
    "counts": 0.3,
    "build": {"cuda_pathfinder": 3.0, "cuda_core": 50.0, "cuda_bindings": 300.0},
}
BUILD_CORES = 16  # the cores DEFAULTS' build times were seen on
#: seconds beyond the per-case figures, which come from the benchmarks' own durations: per commit
#: asv measures (its environment, discovery, setup_cache and a process per benchmark; H100: 143 s
#: for c278ecb3d against 91 s of durations) and per paired step (two environments from the wheel
#: cache, 10-13 s each on the H100 and the H200)
OVERHEAD = {"asv": 50.0, "steps": 25.0, "window": 30.0}
#: seconds the imports and the driver's load take a build in a window: 15 of its 45 process pairs
#: (about 160 core-seconds, 11 s of 15 cores)
IMPORTS = 11.0
#: the suite's first contexts: cuda.bindings', cuda.core's, CuPy's and the C++ twin's
FIRST_CONTEXTS = 4
#: seconds a window's cold starts take per build beyond its per-case figure: the imports and the
#: first contexts, one at a time after the other cases (docs/method.md, rule 18); a window record
#: that timed them has them taken out of its figure
COLD_STARTS = IMPORTS + FIRST_CONTEXTS * Settings().first_context_seconds()
#: fewer cases than this make a record a partial one (a recheck, a -b run): its seconds per case say
#: little
WHOLE = 50


@dataclass
class Costs:
    """Seconds per case of each measuring part on this machine, and where each figure comes from."""

    per_case: dict
    sources: dict
    cases: int  # the suite's cases today
    cores: int

    def part(self, kind):
        return round(self.per_case[kind] * self.cases, 1)

    def window(self, builds):
        """A window's pass over ``builds`` builds: the per-case figure and the cold starts."""
        return round((self.part("window") + COLD_STARTS) * builds, 1)

    def build(self, package):
        return round(
            DEFAULTS["build"][package] * BUILD_CORES / max(1, min(self.cores, BUILD_CORES)), 1
        )


def _median(values):
    values = [v for v in values if v and v > 0]
    return statistics.median(values) if values else None


def costs(results_dir, machine_name, cases=None, cores=None):
    """:class:`Costs` from the machine's records: asv's run (its results files: every benchmark's
    duration, per case measured), whole-suite paired steps (``seconds`` per case), windows' passes
    (per case and build) and counting passes (per case and commit)."""
    folder = Path(results_dir) / machine_name
    asv = []
    for path in result_files(folder):
        data = asv_files.load(path)
        if data is None or "duration" not in data["result_columns"]:
            continue
        column = data["result_columns"].index("duration")
        spent = sum(row[column] or 0 for row in data["results"].values() if len(row) > column)
        spent += sum((data.get("durations") or {}).values())
        measured = sum(1 for value in asv_files.values(data).values() if value is not None)
        if measured >= WHOLE:
            asv.append(spent / measured)

    def per_case(record):
        n = (
            len(record["cases"])
            + len(record["skipped"])
            + len(record["errors"])
            + len(record.get("only") or {})
        )
        return record["seconds"] / n if n >= WHOLE else None

    steps = [r for r in records.read(folder, "step") if not r.get("identical")]

    def cold(record):  # the seconds of the cold starts a window record timed, for all its builds
        timed = any(is_cold_start(c["name"]) for c in record["cases"])
        return COLD_STARTS * len(record["window"]["block"]) if timed else 0.0

    # a window's pass, per case and build: its block's seconds, less its cold starts, over its
    # cases and builds (each block once, whichever of its steps says it)
    blocks = {
        (tuple(r["window"]["block"]), r["date"]): per_case(
            r | {"seconds": r["window"]["seconds"] - cold(r)}
        )
        for r in steps
        if r.get("window")
    }
    found = {
        "asv": _median(asv),
        "step": _median(per_case(r) for r in steps if not r.get("window")),
        "window": _median(
            value / len(block) for (block, _), value in blocks.items() if value is not None
        ),
        # a counting pass of several commits at once says the wall time of all of them
        "counts": _median(
            (per_case(r) or 0) / r.get("together", 1) for r in records.read(folder, "counts")
        ),
    }
    per = {k: v if v is not None else DEFAULTS[k] for k, v in found.items()}
    sources = {
        k: (f"{machine_name}'s records" if v is not None else "default") for k, v in found.items()
    }
    return Costs(
        per,
        sources,
        cases if cases is not None else len(suite.cases()),
        cores or os.cpu_count() or 1,
    )
