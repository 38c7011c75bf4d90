"""Stage 3, results: the one reader of what runs leave behind.

asv's results files (``results/<machine>/<commit>-<env>.json``), and the line-per-record files next to them
that asv does not read: ``builds.jsonl`` (what each commit was built from), ``steps.jsonl`` (the paired
comparison of each newly measured commit with the previous one), ``calibration.jsonl`` (per-case
thresholds from paired A/A runs) and ``overhead.jsonl`` (each Python form over its C++ twin, paired). The
dashboard, the reports, the comparisons and the tests read through here.

A results file that does not parse (a run killed mid-write, a bad merge) is skipped with one line naming it;
so is a line of a ``.jsonl`` file.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

from cuda_bench import stats
from cuda_bench.layout import CALIBRATION, OVERHEAD, STEPS, machine_dirs, result_files


def warn(message):
    print(f"results: {message}", file=sys.stderr)


def read(path):
    """One asv results file as a dict; ValueError or OSError when it does not parse or is not one."""
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or "commit_hash" not in data or not isinstance(data.get("results"), dict) \
            or not isinstance(data.get("result_columns"), list) \
            or not all(isinstance(row, list) for row in data["results"].values()):
        raise ValueError("not an asv results file")
    return data


def load(path):
    """One asv results file as a dict, or None (with a line naming it) when it does not parse."""
    try:
        return read(path)
    except (OSError, ValueError) as exc:
        warn(f"skipping {path}: {exc}")
        return None


def load_machine(machine_dir):
    """The results files of one machine that parse, oldest commit first; of one commit measured in several
    environments, the one measured last comes last."""
    found = [d for d in map(load, result_files(machine_dir)) if d is not None]
    return sorted(found, key=lambda d: (d.get("date") or 0, measured_at(d)))


def measured_at(data):
    """When asv last started a benchmark of this results file (ms since the epoch; 0 when it says not)."""
    if "started_at" not in data["result_columns"]:  # read() checked the shapes
        return 0
    column = data["result_columns"].index("started_at")
    return max((row[column] or 0 for row in data["results"].values() if len(row) > column), default=0)


def load_all(results_dir):
    """[(machine, results dict)] of every machine, each machine's newest commit last."""
    return [(folder.name, data) for folder in machine_dirs(results_dir) for data in load_machine(folder)]


def bad_files(results_dir):
    """The results files that do not parse or are no asv results (asv publish would choke on them), by the
    rule :func:`load` skips them by."""
    bad = []
    for folder in machine_dirs(results_dir):
        for path in result_files(folder):
            try:
                read(path)
            except (OSError, ValueError):
                bad.append(path)
    return bad


def values(data, column="result"):
    """{(benchmark, params tuple): value} of one results file's ``column`` (asv's medians by default;
    ``"samples"``: each case's recorded samples); params as asv writes them ("'core'")."""
    columns = data["result_columns"]
    out = {}
    for name, row in data["results"].items():
        entry = dict(zip(columns, row))
        params = entry.get("params") or []
        combos = list(itertools.product(*params))
        found = entry.get(column) if params else [entry.get(column)]
        if found is None:  # the whole benchmark failed (e.g. in setup_cache), or no such column
            found = [None] * len(combos)
        for combo, value in zip(combos, found):
            out[(name, combo)] = value
    return out


def versions(data):
    """{benchmark: asv's version of it} in one results file (a changed benchmark gets a new version)."""
    columns = data["result_columns"]
    return {name: dict(zip(columns, row)).get("version") for name, row in data["results"].items()}


def comparable(data, reference):
    """``values(data)`` of the benchmarks whose version is the one ``reference`` (a results file) has: numbers
    of an earlier version of a benchmark measured something else and are not compared with today's."""
    wanted, have = versions(reference), versions(data)
    return {key: value for key, value in values(data).items() if have.get(key[0]) == wanted.get(key[0])}


def suite(results_dir):
    """asv's benchmarks.json of a results directory: {benchmark: its description}."""
    path = Path(results_dir) / "benchmarks.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    return {name: b for name, b in data.items() if isinstance(b, dict)}


def read_lines(path):
    """The records of a ``.jsonl`` file, oldest first ([] when there is none); a line that does not parse (a
    write cut off) is left out, named on one line, as a results file that does not parse is."""
    path = Path(path)
    if not path.exists():
        return []
    records = []
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError as exc:  # not JSON, or not UTF-8
                warn(f"{path}:{number} does not parse ({getattr(exc, 'msg', None) or exc.reason}); left out")
    return records


def append_line(path, record):
    """``record`` as the last line of a ``.jsonl`` file, on a line of its own even after a cut-off write."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    cut = False
    if path.exists() and path.stat().st_size:
        with open(path, "rb") as f:
            f.seek(-1, 2)
            cut = f.read() != b"\n"
    with open(path, "a") as f:
        f.write(("\n" if cut else "") + json.dumps(record, sort_keys=True) + "\n")


def machine_start(record):
    """When the machine start a record ran on booted (``host.boot``; None for records older than it)."""
    return (record.get("host") or {}).get("boot")


def start_id(host):
    """Which machine start a record's ``host`` (``machine.host()``) names: the kernel's boot id, else the boot
    time (records before session 18), else None (unknown: all such records count as one start)."""
    host = host or {}
    return host.get("boot_id") or host.get("boot")


def layouts(record):
    """The paired engine's layouts a record was measured with: "random" (a layout per process) or "fixed" (one
    per build: asked for, or every record before the field, the engine's only way then, or the workers said
    their layout was fixed anyway, as on a kernel that randomises nothing)."""
    settings = record.get("settings") or {}
    return "fixed" if settings.get("aslr_off") else settings.get("layouts") or "fixed"


def release_step(step):
    """Whether a history step pairs two cuda-core releases (the release ladder's steps): its record says so
    (``release_tags``: both commits' release tags, or None). The H200's steps from before the field (session
    19's ladder, main's steps before it) were given it in session 23, from the fork's tags by
    ``run.release_tags``; a record without it is no release step."""
    return bool(step.get("release_tags"))


def steps(results_dir, machine_name):
    """The history's paired steps of one machine, one per (base, head), in the order they were first made.

    A step measured again (``scripts/bench steps --recheck`` measures its flagged cases on another machine
    start) keeps its first record's fields but these: ``errors`` names the cases no record measured (the
    newest record's text), ``lost`` the cases whose shown measurement lost process pairs (``paired.kept``),
    ``seconds`` and ``build_seconds`` add up. Each case takes the numbers of its newest measurement (of a
    regression: its newest flag) and adds:

    * ``measurements``: every measurement of the case, oldest first, each with its ``start`` (boot time),
      ``start_id`` (:func:`start_id`), ``date``, ``layouts`` (:func:`layouts`), ratio, interval and verdict;
    * the ``verdict`` that all of them give together, and ``confirmed`` (``stats.repeated_verdict``).

    ``rechecks`` lists the later records, a recheck or the whole step measured again (date, start, command)."""
    found = {}
    for record in read_lines(Path(results_dir) / machine_name / STEPS):
        found.setdefault((record["base"], record["head"]), []).append(record)
    return [_merged(records) for records in found.values()]


def _merged(records):
    first = records[0]
    by_name = {}
    for record in records:
        for case in record["cases"]:
            seen = {k: case[k] for k in ("ratio", "low", "high", "verdict") if k in case}
            by_name.setdefault(case["name"], []).append((case, seen | {
                "start": machine_start(record), "start_id": start_id(record.get("host")), "date": record.get("date"),
                "layouts": layouts(record)}, record))
    cases, lost = [], {}
    for name, measured in by_name.items():
        verdict, confirmed = stats.repeated_verdict([(m["start_id"], m["verdict"], m["layouts"])
                                                      for _, m, _ in measured])
        # the numbers shown: the newest measurement that says what the verdict says (a regression's, its flag)
        shown, _, record = next((found for found in reversed(measured) if found[1]["verdict"] == verdict),
                                measured[-1])
        cases.append(shown | {"verdict": verdict, "confirmed": confirmed, "measurements": [m for _, m, _ in measured]})
        if name in (record.get("lost") or {}):  # of the measurement shown, not of another
            lost[name] = record["lost"][name]
    again = [{"date": r.get("date"), "start": machine_start(r), "command": r.get("command")} for r in records[1:]]
    errors = {}
    for record in records:
        errors |= record.get("errors") or {}
    return first | {"cases": cases, "rechecks": again, "lost": lost,
                    "errors": {name: text for name, text in errors.items() if name not in by_name},
                    "seconds": round(sum(r.get("seconds") or 0 for r in records), 1),
                    "build_seconds": round(sum(r.get("build_seconds") or 0 for r in records), 1)}


def calibration(results_dir, machine_name):
    """{case: threshold} from every A/A calibration of the machine: for each case the highest, so that none
    of those A/A runs would have flagged it ({} before any; delete a line to forget a run)."""
    out = {}
    for record in read_lines(Path(results_dir) / machine_name / CALIBRATION):
        for name, threshold in record["thresholds"].items():
            out[name] = max(threshold, out.get(name, 0))
    return out


def overhead_runs(results_dir, machine_name):
    """Every over-C++ record of one machine, oldest first."""
    return read_lines(Path(results_dir) / machine_name / OVERHEAD)
