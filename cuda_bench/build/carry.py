"""Stage 1, build: prebuilt wheels in batches for a GPU machine without network, each batch what one
call carries (``cuda-bench plan --carry-limit``): the plan's parts in order, a wheel two parts share
counted once, a part whose wheels need more than one call split over several.
"""

from __future__ import annotations

from pathlib import Path

from cuda_bench.build import toolkit, trees


def batches(items, repo, bindings, limit, cache=None, python=None):
    """The plan's items in batches for a GPU machine without network that takes at most ``limit``
    bytes of prebuilt wheels a call: [{"items": [item numbers, 1 first], "commits": {bindings:
    [commits]}, "bytes": the wheels' size, "missing": [package/key the cache lacks: built there],
    "part": (k, n) where one item's wheels take n calls, else None}], in the plan's order. An item
    goes into the current batch while the wheels it adds fit; an item whose wheels alone need more
    than ``limit`` takes several batches, its commits' wheels packed in order, each batch carried
    by a call of its own (a warm machine keeps its wheel cache between calls) before the last one
    measures. ``bindings``: the plan's, for the items that name none; ``python``: the version the
    machine runs (the cache's keys name it)."""
    cache = Path(cache or toolkit.cache_root())

    def size(entry):
        return sum(p.stat().st_size for p in (cache / entry).glob("*.whl"))

    def start(numbers, part=None):
        found = {"items": numbers, "commits": {}, "bytes": 0, "entries": set(), "missing": []}
        out.append(found | {"part": part})
        return out[-1]

    def add(batch, spec, commit, entries):
        listed = batch["commits"].setdefault(spec, [])
        if commit not in listed:
            listed.append(commit)
        new = entries - batch["entries"]
        batch["bytes"] += sum(size(e) for e in new)
        batch["missing"] += sorted(e for e in new if not size(e))
        batch["entries"] |= new

    out, current = [], None
    for number, item in enumerate(items, 1):
        spec = item.bindings or bindings
        needs = [
            (c, {f"{p}/{k}" for p, k in trees.cache_keys(repo, c, spec, python)})
            for c in (item.needs or item.commits)
        ]
        entries = set().union(*(e for _, e in needs)) if needs else set()
        adds = sum(size(e) for e in entries - (current["entries"] if current else set()))
        if current is not None and current["part"] is None and current["bytes"] + adds <= limit:
            current["items"].append(number)
        elif sum(size(e) for e in entries) <= limit:
            current = start([number])
        else:  # more than one call carries: its commits' wheels in order, a call each batch
            parts = [start([number])]
            for commit, wanted in needs:
                grows = sum(size(e) for e in wanted - parts[-1]["entries"])
                if parts[-1]["bytes"] and parts[-1]["bytes"] + grows > limit:
                    parts.append(start([number]))
                add(parts[-1], spec, commit, wanted)
            for k, batch in enumerate(parts, 1):
                batch["part"] = (k, len(parts))
            current = None
            continue
        for commit, wanted in needs:
            add(current, spec, commit, wanted)
    for found in out:
        del found["entries"]
    return out


def batch_lines(found, limit):
    """:func:`batches` as lines: each batch's items, size and the offline carry that makes it."""
    lines = [
        f"     prebuilt wheels in batches of at most {limit / 2**20:.0f} MiB, one a call "
        "(scripts/offline_carry.sh with PREBUILT):"
    ]
    for i, batch in enumerate(found, 1):
        part = (
            f" (part {batch['part'][0]} of {batch['part'][1]}: "
            + ("the call that measures" if batch["part"][0] == batch["part"][1] else "carried only")
            + ")"
            if batch["part"]
            else ""
        )
        lines.append(
            f"     batch {i}: item{'s' if len(batch['items']) > 1 else ''} "
            f"{', '.join(map(str, batch['items']))}{part}, {batch['bytes'] / 2**20:.1f} MiB"
        )
        for spec, commits in batch["commits"].items():
            lines.append(
                f'       CUDA_BENCH_BINDINGS={spec} PREBUILT="{" ".join(c[:12] for c in commits)}"'
            )
        if batch["missing"]:
            lines.append(
                f"       not in this machine's wheel cache (built there, or prebuild them here): "
                f"{len(batch['missing'])}: " + ", ".join(e.split("/")[0] for e in batch["missing"])
            )
    return lines
