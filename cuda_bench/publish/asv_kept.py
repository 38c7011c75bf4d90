"""Nothing asv measured is lost: a case a results file holds a measured value of, which a later run
skipped or failed under the same benchmark version, keeps its value (the project's asv plugin
restores it after every asv command that writes results, ``cuda_bench.publish.asv_plugin``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from cuda_bench.foundations.paths import machine_dirs, result_files


def measured(value):
    return isinstance(value, (int, float)) and not math.isnan(value)


def snapshot(results_dir):
    """{results file: its JSON} of every machine in ``results_dir``; files that do not parse are
    left out."""
    found = {}
    for folder in machine_dirs(results_dir):
        for path in result_files(folder):
            try:
                found[path] = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
    return found


def keep_measured(old, new):
    """Put back into ``new`` (a results file's JSON, changed in place) every case that ``old``
    measured and ``new`` holds as skipped (NaN) or failed (None) under the same benchmark version.
    Returns the case names (``benchmark(params)``) put back."""
    columns = new.get("result_columns") or []
    if columns != old.get("result_columns") or "result" not in columns:
        return []
    at = {column: i for i, column in enumerate(columns)}
    kept = []
    for name, row in new.get("results", {}).items():
        before = old.get("results", {}).get(name)
        if not before or before[at["version"]] != row[at["version"]]:
            continue
        params = row[at["params"]] if "params" in at else []
        if before[at["params"]] != params:
            continue
        combos = _combos(
            params
        )  # asv keeps every result as a list, one per combination ([()] without params)
        row, before = _padded(row, columns, len(combos)), _padded(before, columns, len(combos))
        for i, combo in enumerate(combos):
            if measured(before[at["result"]][i]) and not measured(row[at["result"]][i]):
                for (
                    column,
                    j,
                ) in at.items():  # every per-case column: result, the stats, the samples
                    if (
                        column == "params"
                        or not isinstance(before[j], list)
                        or len(before[j]) != len(combos)
                    ):
                        continue
                    if not isinstance(
                        row[j], list
                    ):  # asv writes None for a column no case of this run has
                        row[j] = [None] * len(combos)
                    row[j][i] = before[j][i]
                kept.append(f"{name}({', '.join(combo)})" if combo else name)
        while row and row[-1] is None:  # as asv writes a row: without trailing empty columns
            row.pop()
        new["results"][name] = row
    return kept


def _padded(row, columns, combos):
    """A results row as long as ``columns`` (asv leaves trailing empty columns out), its result a
    list of one value per combination (asv writes None for a benchmark that failed in every one)."""
    row = list(row) + [None] * (len(columns) - len(row))
    at = columns.index("result")
    if row[at] is None:
        row[at] = [None] * combos
    return row


def _combos(params):
    import itertools

    return list(itertools.product(*params))


def restore_measured(results_dir, before):
    """After a command: for every results file of ``before`` (:func:`snapshot`) that it rewrote, put
    back what it lost (:func:`keep_measured`). Returns [(file, case)] put back."""
    from asv import util

    lost = []
    for path, old in before.items():
        try:
            new = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        kept = keep_measured(old, new)
        if kept:
            util.write_json(str(path), new, api_version=new.get("version"), compact=True)
            lost += [(path, case) for case in kept]
    return lost
