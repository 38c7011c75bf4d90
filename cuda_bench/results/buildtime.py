"""Stage 3, results: what building each package tree cost, tracked per tree; a change of its CPU
seconds flagged where it clears what rebuilding one tree costs by itself.

A build of a package (``wheels.build_into``) records its wall seconds and the CPU seconds (user +
system) of the compilers and everything else ``pip wheel`` ran: unlike the wall time, the CPU
seconds do not depend on how many builds ran beside it. ``keep`` writes one ``compile`` record per
package tree compiled (``results/<machine>/compiles.jsonl``) from the build records a run keeps;
a tree built again (a fresh machine has an empty wheel cache) gets a record of its own, so the
history holds what one tree's rebuilds spread by (:func:`spread`).

:func:`flags` compares adjacent built trees of a package along the history (each tree at its
first commit): a ratio of CPU seconds of at least ``FACTOR`` either way, and beyond the largest
spread of a tree built twice on the machine, is flagged, naming the versions that changed
between the two builds (Cython, the compiler, setuptools, Python, the jobs). It is unpaired (two
builds, minutes or days apart) and says so; without a tree built twice it judges nothing. Builds
compiled through ccache are left out: a cache hit costs next to nothing.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from cuda_bench.foundations import machine
from cuda_bench.foundations.text import times
from cuda_bench.results import records

#: a change of CPU seconds between adjacent built trees at least this large (either way) is flagged
#: where it also clears the spread of one tree built twice
FACTOR = 1.25
#: what the pages and flags say of every build-time number
UNPAIRED = (
    "unpaired: one build's CPU seconds against another's, built minutes or days apart; the "
    "compilers' user and system time, which does not depend on how many builds ran beside it"
)


def compiles_of(rows, host=None):
    """The ``compile`` records (``records.SHAPES``) of build records ``rows`` (``builds.jsonl``'s,
    ``wheels.build``'s): one per package a build compiled."""
    host = host if host is not None else machine.host()
    out = []
    for row in rows:
        for package, built in (row.get("packages") or {}).items():
            done = built.get("compile")
            if not done or built.get("action") != "built":
                continue
            out.append(
                {
                    "package": package,
                    "tree": built["key"],
                    "commit": row["commit"],
                    "host": host,
                    **{k: done[k] for k in ("built", "wall_seconds", "cpu_seconds", "jobs")},
                    "ccache": done["ccache"],
                    "versions": done["versions"],
                }
            )
    return out


def keep(folder, rows, host=None):
    """Append to ``folder``'s compiles.jsonl the compile records of ``rows`` it does not hold yet
    (one per package, tree and time it was built: an environment's build record is kept again each
    time a run reuses it). How many were added."""
    held = {(r["package"], r["tree"], r["built"]) for r in records.read(folder, "compile")}
    added = 0
    for record in compiles_of(rows, host):
        key = (record["package"], record["tree"], record["built"])
        if key not in held:
            Path(folder).mkdir(parents=True, exist_ok=True)
            records.append(folder, "compile", record)
            held.add(key)
            added += 1
    return added


def counted(compiles):
    """The compile records whose CPU seconds mean the compile: not through ccache."""
    return [c for c in compiles if not c["ccache"]]


def spread(compiles, package):
    """The largest ratio of CPU seconds (the most over the least) between two builds of one tree of
    ``package`` with the same jobs: (ratio, tree, [cpu seconds]), or None where no tree was built
    twice."""
    by_tree = {}
    for c in counted(compiles):
        if c["package"] == package:
            by_tree.setdefault((c["tree"], c["jobs"]), []).append(c["cpu_seconds"])
    found = [
        (max(cpus) / min(cpus), tree, sorted(cpus))
        for (tree, _), cpus in by_tree.items()
        if len(cpus) > 1 and min(cpus) > 0
    ]
    return max(found) if found else None


def series(compiles, place):
    """{package: [tree's builds]} along the history: each tree of a package once, at the first of
    its commits (``place(commit)``: a sort key, the history's order), with every build of it
    (oldest first): [{"tree", "commit", "cpu_seconds" (the median of its builds), "builds"}]."""
    out = {}
    for package in dict.fromkeys(c["package"] for c in compiles):
        trees = {}
        for c in counted(compiles):
            if c["package"] == package:
                trees.setdefault(c["tree"], []).append(c)
        rows = [
            {
                "tree": tree,
                "commit": min((b["commit"] for b in builds), key=place),
                "cpu_seconds": round(statistics.median(b["cpu_seconds"] for b in builds), 1),
                "builds": sorted(builds, key=lambda b: b["built"]),
            }
            for tree, builds in trees.items()
        ]
        out[package] = sorted(rows, key=lambda row: place(row["commit"]))
    return out


def changed_versions(a, b):
    """What differs between two builds' versions and jobs: ["Cython 3.0.12 → 3.1.0", "jobs 8 →
    16"]."""
    out = []
    names = {"cython": "Cython", "compiler": "compiler", "setuptools": "setuptools"}
    names["python"] = "Python"
    for key, name in names.items():
        before, after = a["versions"].get(key), b["versions"].get(key)
        if before != after:
            out.append(f"{name} {before or 'none'} → {after or 'none'}")
    if a["jobs"] != b["jobs"]:
        out.append(f"jobs {a['jobs']} → {b['jobs']}")
    return out


def flags(compiles, place, factor=FACTOR):
    """Per package, each pair of adjacent built trees (:func:`series`) whose CPU seconds changed by
    at least ``factor`` either way and by more than the package's :func:`spread`: [{"package",
    "base", "head" (the two rows), "ratio", "changed" (:func:`changed_versions` of the newest build
    of each)}]; and {package: why nothing of it is judged} where no tree was built twice."""
    found, unjudged = [], {}
    for package, rows in series(compiles, place).items():
        spread_ = spread(compiles, package)
        if spread_ is None:
            unjudged[package] = (
                f"no tree of {package} built twice on this machine: what a rebuild spreads by is "
                "not known, so no change is judged"
            )
            continue
        bar = max(factor, spread_[0])
        for base, head in zip(rows, rows[1:]):
            if min(base["cpu_seconds"], head["cpu_seconds"]) <= 0:
                continue
            ratio = head["cpu_seconds"] / base["cpu_seconds"]
            if ratio >= bar or ratio <= 1 / bar:
                found.append(
                    {
                        "package": package,
                        "base": base,
                        "head": head,
                        "ratio": round(ratio, 3),
                        "spread": round(spread_[0], 3),
                        "changed": changed_versions(base["builds"][-1], head["builds"][-1]),
                    }
                )
    return found, unjudged


def flag_line(flag):
    """A flag in one line: "cuda_bindings: 412.0 → 830.5 CPU seconds (×2.02, a rebuild spreads by
    ×1.04) from abc123def to 456def789; Cython 3.0.12 → 3.1.0 (unpaired)"."""
    changed = "; ".join(flag["changed"]) or "no version changed"
    base, head = flag["base"]["commit"][:9], flag["head"]["commit"][:9]
    return (
        f"{flag['package']}: {flag['base']['cpu_seconds']:g} → {flag['head']['cpu_seconds']:g} "
        f"CPU seconds ({times(flag['ratio'], 2)}, a rebuild of one tree spreads by "
        f"{times(flag['spread'], 2)}) from {base} to {head}; "
        f"{changed} (unpaired)"
    )
