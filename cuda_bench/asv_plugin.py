"""What the project adds to asv itself, so that ``asv run``, ``asv continuous`` and ``asv publish`` typed as they
are behave as the project needs. asv imports this module because ``asv.conf.json`` names it in ``plugins``.

* **Set once**: ``cuda-bench init`` writes ``.asv/local.json`` (this checkout's cuda-python clone and asv
  machine name); every asv command reads it, so ``asv run HEAD~20..HEAD`` needs neither ``--machine`` nor a
  reachable GitHub.
* **No GPU, no history**: on a machine without a GPU, asv's results go to ``results-no-gpu`` beside asv's
  environments (``.asv/results-no-gpu``), never into ``results/``, the history of real GPU runs. ``asv publish``
  still publishes ``results/``.
* **Nothing measured is lost**: a case that a results file holds a measured value of, and that a later run
  skipped or failed under the same benchmark version, keeps its value; the command names each such case and
  exits 2.
* **No verdict on nothing**: ``asv compare`` and ``asv continuous`` stop with exit status 2, before asv's "not
  significantly changed", when no case was measured on both commits.

asv 0.6.6 (pinned in requirements.txt) calls a command as ``Command.run_from_conf_args(conf, args)`` after it
imports the plugins, so wrapping that classmethod reaches the command that is about to run.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from cuda_bench import asvrun, machine
from cuda_bench.paths import machine_dirs, no_gpu_results, result_files

# asv commands that write results: on a machine without a GPU they write outside the history
WRITERS = ("Run", "Continuous", "Find", "Profile")
# asv commands that read the history as it is: publish and preview show results/ on any machine
SHOW_HISTORY = ("Publish", "Preview")


def say(message):
    print(f"cuda-bench: {message}", file=sys.stderr, flush=True)


def apply_settings(name, conf, args, settings=None, gpu=None):
    """Adjust asv's ``conf`` and ``args`` for command ``name`` (a Command class name) before it runs."""
    settings = asvrun.local_settings() if settings is None else settings
    if settings.get("repo") and conf.repo == asvrun.load_conf().get("repo"):  # a repository asked for stays
        conf.repo = settings["repo"]
    if hasattr(args, "machine") and not args.machine and settings.get("machine"):
        args.machine = settings["machine"]
    if name in SHOW_HISTORY:
        return
    gpu = machine.gpu_info() if gpu is None else gpu
    elsewhere = no_gpu_results(conf.env_dir)
    if not gpu and Path(conf.results_dir).resolve() != elsewhere:
        if name in WRITERS:
            say(f"no GPU on this machine: results go to {elsewhere}, not {conf.results_dir} (the history of GPU runs)")
        conf.results_dir = str(elsewhere)


# --- nothing measured is lost ------------------------------------------------------------------------
def measured(value):
    return isinstance(value, (int, float)) and not math.isnan(value)


def snapshot(results_dir):
    """{results file: its JSON} of every machine in ``results_dir``; files that do not parse are left out."""
    found = {}
    for folder in machine_dirs(results_dir):
        for path in result_files(folder):
            try:
                found[path] = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
    return found


def keep_measured(old, new):
    """Put back into ``new`` (a results file's JSON, changed in place) every case that ``old`` measured and
    ``new`` holds as skipped (NaN) or failed (None) under the same benchmark version. Returns the case names
    (``benchmark(params)``) put back."""
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
        if not params:  # one case: its whole row
            if measured(before[at["result"]]) and not measured(row[at["result"]]):
                new["results"][name] = before
                kept.append(name)
            continue
        if before[at["params"]] != params:
            continue
        combos = _combos(params)
        row, before = _padded(row, columns), _padded(before, columns)
        for i, combo in enumerate(combos):
            if measured(before[at["result"]][i]) and not measured(row[at["result"]][i]):
                for column, j in at.items():  # every per-case column: result, the stats, the samples
                    if column == "params" or not isinstance(before[j], list) or len(before[j]) != len(combos):
                        continue
                    if not isinstance(row[j], list):  # asv writes None for a column no case of this run has
                        row[j] = [None] * len(combos)
                    row[j][i] = before[j][i]
                kept.append(f"{name}({', '.join(combo)})")
        while row and row[-1] is None:  # as asv writes a row: without trailing empty columns
            row.pop()
        new["results"][name] = row
    return kept


def _padded(row, columns):
    """A results row as long as ``columns`` (asv leaves trailing empty columns out)."""
    return list(row) + [None] * (len(columns) - len(row))


def _combos(params):
    import itertools

    return list(itertools.product(*params))


def restore_measured(results_dir, before):
    """After a command: for every results file of ``before`` (:func:`snapshot`) that it rewrote, put back what
    it lost (:func:`keep_measured`). Returns [(file, case)] put back."""
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


# --- the wrapper ----------------------------------------------------------------------------------
def wrap(cls):
    original = cls.__dict__["run_from_conf_args"].__func__

    def run_from_conf_args(klass, conf, args):
        apply_settings(klass.__name__, conf, args)
        before = snapshot(conf.results_dir) if klass.__name__ in WRITERS else {}
        status = original(klass, conf, args)
        lost = restore_measured(conf.results_dir, before) if before else []
        for path, case in lost:
            say(f"{case} at {path.name[:8]}: measured before, skipped or failed now; the measured value is kept")
        if lost:
            say(f"{len(lost)} measured case(s) this run did not measure again (above); results are as they were")
            return status or 2
        return status

    cls.run_from_conf_args = classmethod(run_from_conf_args)


def no_verdict_on_nothing(compare):
    """``Compare.print_table`` that stops with exit status 2 when no case has a measured value on both sides."""
    original = compare.__dict__["print_table"].__func__

    def print_table(klass, conf, hash_1, hash_2, factor, split, resultset_1=None, resultset_2=None, **kwargs):
        if resultset_1 is not None and resultset_2 is not None:
            resultset_1, resultset_2 = list(resultset_1), list(resultset_2)
            first = {(r[0], r[6], r[7]): r[2] for r in resultset_1}
            both = [r for r in resultset_2 if _any_measured(first.get((r[0], r[6], r[7]))) and _any_measured(r[2])]
            if not both:
                say(f"no case has a measured value at both {hash_1[:9]} and {hash_2[:9]} (every one skipped or failed, "
                    "or not run): nothing to compare")
                raise SystemExit(2)
        return original(klass, conf, hash_1, hash_2, factor, split, resultset_1=resultset_1,
                        resultset_2=resultset_2, **kwargs)

    compare.print_table = classmethod(print_table)


def _any_measured(value):
    return any(map(measured, value)) if isinstance(value, list) else measured(value)


def setup():
    """Called by asv's plugin manager when it imports this module."""
    from asv import util
    from asv.commands import Command
    from asv.commands.compare import Compare

    for cls in util.iter_subclasses(Command):
        if "run_from_conf_args" in cls.__dict__ and not cls.__dict__.get("_cuda_bench"):
            wrap(cls)
            cls._cuda_bench = True
    if not Compare.__dict__.get("_cuda_bench_print_table"):
        no_verdict_on_nothing(Compare)
        Compare._cuda_bench_print_table = True
