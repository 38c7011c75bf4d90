"""Stage 4, compare: the record of two commits compared (``summary.json``), as the pull-request
gate (``cuda_bench.compare.gate``) and a window's steps (``cuda_bench.compare.onepass``) make it:
what each side is built from and whether the two are identical builds (nothing to measure), the
record of a paired run or of identical builds, whether it left something out, and the record
written with its Markdown.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from cuda_bench.build import toolkit, trees, wheels
from cuda_bench.compare import comment, paired
from cuda_bench.foundations import machine


def built_from(repo, base, head, bindings):
    """{"base": identity, "head": identity}: what each side's environment is built from
    (``trees.identity``), read from git before anything is built; None where git cannot say (a
    revision it does not have: the build then says why it cannot build it)."""
    try:
        return {
            side: trees.identity(repo, trees.resolve(repo, rev), bindings)
            for side, rev in (("base", base), ("head", head))
        }
    except toolkit.BuildError:
        return None


def packages_changed(sides):
    """The packages whose build differs between the sides of :func:`built_from`: [] for identical
    builds, which only two cuda-python trees can be (both have ``cuda_core/``); None where it is not
    known."""
    if not sides or not all("cuda_core" in sides[side] for side in ("base", "head")):
        return None
    return trees.differs(sides["base"], sides["head"])


def identical(sides):
    """Whether the sides of :func:`built_from` are identical builds: nothing to measure between
    them."""
    return packages_changed(sides) == []


def identical_summary(
    repo, base, head, kind, sides, bindings, settings, command=None, machine_info=None
):
    """The record of a comparison between identical builds (:func:`packages_changed` is empty):
    nothing measured, since both sides would install the same wheels and time the same code; its
    ``built_from`` says what they are."""
    return {
        "kind": kind,
        "base": trees.resolve(repo, base),
        "head": trees.resolve(repo, head),
        "base_rev": base,
        "head_rev": head,
        "seconds": 0.0,
        "build_seconds": 0.0,
        "expected": [],
        "command": command,
        "machine": machine_info or {},
        "host": machine.host(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": settings_record(settings or paired.Settings(), [], []),
        "versions": {},
        "cases": [],
        "skipped": {},
        "only": {},
        "errors": {},
        "lost": {},
        "env": {},
        "bindings": bindings,
        "identical": True,
        "built_from": sides,
        "packages_changed": [],
    }


def summary(
    report, kind, expected=(), build_seconds=None, command=None, machine_info=None, sides=None
):
    """The record of one paired run (``summary.json``); ``sides``: what each side is built from
    (:func:`built_from`)."""
    base, head = report.sides
    built = (
        {"identical": False, "built_from": sides, "packages_changed": packages_changed(sides)}
        if sides
        else {}
    )
    return built | {
        "kind": kind,
        "base": base.commit,
        "head": head.commit,
        "base_rev": base.rev,
        "head_rev": head.rev,
        "seconds": report.seconds,
        "build_seconds": build_seconds,
        "expected": list(expected),
        "command": command,
        "machine": machine_info or {},
        "host": machine.host(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "settings": settings_record(
            report.settings, report.cores, [w.get("aslr_off") for w in report.workers.values()]
        ),
        "versions": {side: w.get("versions") for side, w in report.workers.items()},
        "cases": [case.summary() for case in report.cases],
        "skipped": report.skipped,
        "only": {name: list(v) for name, v in report.only.items()},
        "errors": report.errors,
        "lost": report.lost,
        "env": {side.name: side.env for side in report.sides if side.env},
        "time": report.time,
        # what compiled each side's wheels, where its environment says (wheels.built_with)
        "compiled_by": {
            key: wheels.compiled_by(side.record)
            for key, side in zip(("base", "head"), report.sides)
        },
    }


def settings_record(settings, cores, aslr_off):
    """How a paired record says it was measured: the settings, the cores, and ``layouts``: "random"
    (a layout per process) unless asked for "fixed" or every worker's layout was fixed anyway
    (``aslr_off``: a kernel that randomises nothing)."""
    fixed = bool(aslr_off) and all(aslr_off)
    return {
        **settings.describe(),
        "cores": cores,
        "aslr_off": fixed,
        "layouts": "fixed" if fixed else settings.layouts,
    }


def incomplete(data):
    """Whether a record left something out: a case not measured, or measured without some of its
    processes (``paired.kept``)."""
    return bool(data["errors"] or data.get("lost"))


def write_files(out_dir, data, stem, markdown):
    """The record as ``stem``.json and ``markdown(data)`` as ``stem``.md into ``out_dir``; the
    Markdown."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.json").write_text(json.dumps(data, indent=1) + "\n")
    text = markdown(data)
    (out_dir / f"{stem}.md").write_text(text)
    return text


def write(out_dir, data):
    """summary.json and summary.md (the comment) into ``out_dir``; the comment."""
    return write_files(out_dir, data, "summary", comment.comment)
