"""Stage 2, run: what ``import cuda.core`` imports in a build's interpreter, module by module, from
``python -X importtime``; how two builds' imports differ.

``python -X importtime`` prints, for each module a process imports, the microseconds its own code
took (self) and those with the modules it imported (cumulative), children before their importer and
indented one level deeper. :func:`measure` runs the import ``RUNS`` times in fresh interpreters of a
build and keeps each module's fastest self and cumulative time (the same modules load every time:
the fastest run is the least disturbed), leaving out what ``python -c pass`` imports (the
interpreter's own start). :func:`diff` names what a change added (the modules, under the first that
brought each subtree in) and made slower (a module whose fastest self time grew by at least
``SLOWER`` and ``SLOWER_US``): unpaired, so a hint at where a cold start's paired slowdown comes
from, never a verdict of its own. The counting pass records one ``imports`` record per commit.
"""

from __future__ import annotations

import re
import subprocess
import time

#: fresh interpreters per build; each module's fastest of them is kept
RUNS = 5
#: what makes a module "slower" in :func:`diff`: its fastest self time grown by this factor and
#: by at least SLOWER_US microseconds
SLOWER = 1.25
SLOWER_US = 500
#: the modules :func:`diff` names of each kind, the costliest first
SHOWN = 8

LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S.*)$")

#: the module a user of a build imports: cuda.core, or cuda.core.experimental before cuda-core 0.5
#: (as benchmarks/_compat.py finds it)
PROBE = (
    "import importlib\n"
    "top = importlib.import_module('cuda.core')\n"
    "print('cuda.core' if hasattr(top, 'Device') else 'cuda.core.experimental')\n"
)


class ImportsError(RuntimeError):
    """A build's interpreter could not import what is measured."""


def parse(text):
    """``python -X importtime``'s lines in ``text`` (its stderr) as [(module, depth, self µs,
    cumulative µs)], in the order printed (each module after the modules it imported); other lines
    are left out."""
    found = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            self_us, cumulative, indent, name = m.groups()
            found.append((name.strip(), len(indent) // 2, int(self_us), int(cumulative)))
    return found


def importers(modules):
    """{module: the module that imported it, or None for one the statement imported}, from the
    order and depths :func:`parse` gives."""
    out, waiting = {}, {}  # depth -> modules printed at that depth, still without an importer
    for name, depth, _, _ in modules:
        for child in waiting.pop(depth + 1, []):
            out[child] = name
        waiting.setdefault(depth, []).append(name)
    for names in waiting.values():
        for name in names:
            out.setdefault(name, None)
    return out


def run_importtime(python, statement, env=None):
    """One fresh interpreter's ``-X importtime`` of ``statement``: :func:`parse`'s list."""
    done = subprocess.run(
        [str(python), "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise ImportsError(f"{python} -c {statement!r} exited {done.returncode}: {tail[0]}")
    return parse(done.stderr)


def statement_of(python, env=None):
    """``import cuda.core`` or ``import cuda.core.experimental``: what a user of this build
    imports."""
    done = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, env=env)
    if done.returncode:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise ImportsError(f"{python} cannot import cuda.core: {tail[0]}")
    return f"import {done.stdout.strip()}"


def fastest(runs, startup=()):
    """The modules of several runs of one import, each with its fastest self and cumulative time,
    in the first run's order, less those of ``startup`` (what ``python -c pass`` imports):
    [[module, depth, self µs, cumulative µs]]. A module printed twice in a run (an optional import
    that failed and was tried again) is kept where it was printed first."""
    best = {}
    for modules in runs:
        for name, _, self_us, cumulative in _first_of_each(modules):
            held = best.get(name)
            best[name] = (
                (self_us, cumulative)
                if held is None
                else (min(held[0], self_us), min(held[1], cumulative))
            )
    left_out = set(startup)
    return [
        [name, depth, *best[name]]
        for name, depth, _, _ in _first_of_each(runs[0])
        if name not in left_out
    ]


def _first_of_each(modules):
    seen = set()
    for module in modules:
        if module[0] not in seen:
            seen.add(module[0])
            yield module


def measure(python, *, env=None, runs=RUNS, statement=None):
    """``import cuda.core`` in ``runs`` fresh interpreters of ``python``: {"statement", "runs",
    "modules": :func:`fastest`'s list, "count": modules, "total_us": the statement's top-level
    modules' cumulative time summed, "seconds"}. ImportsError when the build cannot import it."""
    start = time.monotonic()
    statement = statement or statement_of(python, env)
    startup = [name for name, *_ in run_importtime(python, "pass", env)]
    modules = fastest([run_importtime(python, statement, env) for _ in range(runs)], startup)
    return {
        "statement": statement,
        "runs": runs,
        "modules": modules,
        "count": len(modules),
        "total_us": sum(m[3] for m in modules if m[1] == 0),
        "seconds": round(time.monotonic() - start, 1),
    }


def diff(base, head, shown=SHOWN):
    """How two builds' imports (:func:`measure`'s) differ: {"added": [(module, modules under it,
    cumulative µs)], "removed": [...], "slower": [(module, base self µs, head self µs)], "count":
    (base, head), "total_us": (base, head)}. An added module is named under the first module of its
    subtree that was added (``asyncio``, not its 30 submodules); the costliest ``shown`` of each
    kind."""
    before = {m[0]: m for m in base["modules"]}
    after = {m[0]: m for m in head["modules"]}
    return {
        "added": _subtrees(head["modules"], set(after) - set(before))[:shown],
        "removed": _subtrees(base["modules"], set(before) - set(after))[:shown],
        "slower": sorted(
            (
                (name, before[name][2], m[2])
                for name, m in after.items()
                if name in before
                and m[2] >= SLOWER * before[name][2]
                and m[2] - before[name][2] >= SLOWER_US
            ),
            key=lambda row: row[1] - row[2],
        )[:shown],
        "count": (base["count"], head["count"]),
        "total_us": (base["total_us"], head["total_us"]),
    }


def _subtrees(modules, names):
    """The modules of ``names`` whose importer is not one of them: [(module, how many of ``names``
    its subtree holds, its cumulative µs)], the costliest first."""
    parent = importers([tuple(m) for m in modules])
    cumulative = {m[0]: m[3] for m in modules}
    roots = {}
    for name in names:
        top = name
        while parent.get(top) in names:
            top = parent[top]
        roots[top] = roots.get(top, 0) + 1
    return sorted(
        ((name, count, cumulative[name]) for name, count in roots.items()),
        key=lambda row: -row[2],
    )


# --- records and words ----------------------------------------------------------------------------
def record_of(side, measured, *, command=None, machine_info=None):
    """The ``imports`` record (``records.SHAPES``) of one build (a ``paired.Side``) from
    :func:`measure`."""
    from cuda_bench.foundations import machine

    return {
        "commit": side.commit,
        "rev": side.rev,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": measured["seconds"],
        "build_seconds": None,
        "command": command,
        "machine": machine_info or {},
        "host": machine.host(),
        "versions": (side.record or {}).get("installed") or {},
        **{k: measured[k] for k in ("statement", "runs", "modules", "count", "total_us")},
    }


def measure_sides(sides, *, command=None, machine_info=None, progress=None):
    """Each build of ``sides`` (``paired.Side``) measured at once, one thread each: {side name:
    record, or {"error": why} where it could not be}."""
    from concurrent.futures import ThreadPoolExecutor

    def one(side):
        try:
            found = measure(side.python, env=_env(side))
        except (ImportsError, OSError) as exc:
            return {"error": str(exc)}
        if progress:
            progress(
                f"imports at {side.rev}: {found['statement']}: {found['count']} modules, "
                f"{found['total_us'] / 1000:.1f} ms (fastest of {found['runs']})"
            )
        return record_of(side, found, command=command, machine_info=machine_info)

    with ThreadPoolExecutor(max(1, len(sides))) as pool:
        return dict(zip((s.name for s in sides), pool.map(one, sides), strict=True))


def record_path(folder):
    """Where a command keeps one build's record beside its counts: ``folder/imports.json``."""
    from pathlib import Path

    return Path(folder) / "imports.json"


def _env(side):
    import os

    return {**os.environ, **side.env} if side.env else None


def _ms(us):
    return f"{us / 1000:.1f} ms"


def markdown(base, head):
    """What ``import cuda.core`` imports differently at ``head`` than at ``base`` (their records),
    as Markdown lines."""
    found = diff(base, head)
    (count_a, count_b), (total_a, total_b) = found["count"], found["total_us"]
    same_statement = base["statement"] == head["statement"]
    out = [
        "",
        f"#### What `{head['statement']}` imports",
        "",
        (f"`{base['statement']}` → `{head['statement']}`: " if not same_statement else "")
        + f"{count_a} → {count_b} modules, {_ms(total_a)} → {_ms(total_b)} (`python -X "
        f"importtime`, each module's fastest of {head['runs']} fresh interpreters per build, "
        "less what `python -c pass` imports; unpaired: where the time goes, not whether it "
        "changed, which the paired cold-start cases say).",
        "",
    ]
    if found["added"]:
        out.append(
            "- Added: "
            + ", ".join(
                f"`{name}` ({_modules(count)}, {_ms(us)} cumulative)"
                for name, count, us in found["added"]
            )
        )
    if found["slower"]:
        out.append(
            f"- Slower by {SLOWER - 1:.0%} and {SLOWER_US / 1000:g} ms or more: "
            + ", ".join(f"`{name}` {_ms(a)} → {_ms(b)} self" for name, a, b in found["slower"])
        )
    if found["removed"]:
        out.append(
            "- Gone: "
            + ", ".join(f"`{name}` ({_modules(count)})" for name, count, _ in found["removed"])
        )
    if not (found["added"] or found["slower"] or found["removed"]):
        out.append("- The same modules, none slower.")
    return out


def _modules(count):
    return f"{count} module{'s' if count != 1 else ''}"
