"""Stage 3, results: the records the tool writes next to asv's results files, each line one JSON
record.

``results/<machine>/`` holds ``builds.jsonl`` (what each commit was built from), ``steps.jsonl``
(paired steps), ``calibration.jsonl`` (A/A thresholds), ``over-cpp.jsonl`` (each Python form against
its C++ twin) and ``counts.jsonl`` (the work each call does). Every record names its type and the
schema it was written with (``"record"``, ``"schema"``). A reader takes only records of the current
schema whose shape is right (:data:`SHAPES`) and leaves out any other line with one line saying
which and why, noting it (``asv_files.unreadable``: the command exits 2, the pages name the line);
``cuda-bench upgrade`` brings records of an earlier schema to the current one (:func:`upgrade`), as
``asv update`` does for asv's results files.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from cuda_bench.foundations.paths import (
    BISECTS,
    BUILDS,
    CALIBRATION,
    COMPILES,
    COUNTS,
    IMPORTS,
    INSTRUCTIONS,
    OVER_CPP,
    STEPS,
)
from cuda_bench.foundations.stats import MAX_THRESHOLD, MIN_THRESHOLD
from cuda_bench.results import asv_files

SCHEMA = 2  # 1: the records written before records named their type and schema
FILES = {
    "build": BUILDS,
    "step": STEPS,
    "calibration": CALIBRATION,
    "over-cpp": OVER_CPP,
    "counts": COUNTS,
    "bisect": BISECTS,
    "imports": IMPORTS,
    "compile": COMPILES,
    "instructions": INSTRUCTIONS,
}


VERDICTS = ("regression", "improvement", "same")


class RecordError(ValueError):
    """A line that is not a record of the current schema and its type's shape; ``fix``: what to do,
    where the message does not say it (``asv_files.remedy`` otherwise)."""

    def __init__(self, why, fix=None):
        super().__init__(why)
        self.fix = fix


def warn(message):
    print(f"records: {message}", file=sys.stderr)


# --- shapes ---------------------------------------------------------------------------------------
NUMBER, TEXT, MAPPING, LIST, FLAG = "number", "text", "mapping", "list", "flag"
POSITIVE = "positive number"  # a time or a ratio of times: finite and above 0
OPTIONAL = "?"


def _number(value):
    kind = type(value)
    return (kind is float and -math.inf < value < math.inf) or kind is int


CHECKS = {
    NUMBER: _number,
    POSITIVE: lambda v: _number(v) and v > 0,
    TEXT: lambda v: isinstance(v, str),
    MAPPING: lambda v: isinstance(v, dict),
    LIST: lambda v: isinstance(v, list),
    FLAG: lambda v: isinstance(v, bool),
}

HOST = {"start": TEXT + OPTIONAL, "boot": TEXT + OPTIONAL}
PAIRED_SETTINGS = {"layouts": ("random", "fixed"), "confidence": NUMBER, "cores": LIST}
STEP_CASE = {
    "name": TEXT,
    "ratio": POSITIVE,
    "low": POSITIVE,
    "high": POSITIVE,
    "verdict": VERDICTS,
    "threshold": NUMBER,
    "coverage": NUMBER,
    "pairs": LIST,
    "base_ns": POSITIVE,
    "head_ns": POSITIVE,
    "groups": NUMBER,
    "calls_per_sample": NUMBER,
    "control": FLAG,
}
OVER_CPP_CASE = {
    "name": TEXT,
    "twin": TEXT,
    "ratio": POSITIVE,
    "low": POSITIVE,
    "high": POSITIVE,
    "coverage": NUMBER,
    "over_ns": NUMBER,
    "over_low": NUMBER,
    "over_high": NUMBER,
    "py_ns": POSITIVE,
    "cpp_ns": POSITIVE,
    "processes": NUMBER,
    "groups": NUMBER,
    "version": TEXT + OPTIONAL,
    "fast": NUMBER + OPTIONAL,
}
#: one case's work per call (cuda_bench.foundations.counts): ``cuda`` None where CUDA calls could
#: not be counted (the record's ``cuda_why`` says why); ``unsteady``: the counts ("net_blocks",
#: "cuda", ...) that two counted runs did not agree on
COUNTS_CASE = {
    "name": TEXT,
    "calls": NUMBER,
    "cuda": MAPPING + OPTIONAL,
    "nvrtc": MAPPING,
    "python_calls": NUMBER,
    "c_calls": NUMBER,
    "net_blocks": NUMBER,
    "unsteady": LIST,
}
#: one case's instructions per call (cuda_bench.compare.instrpass): the median of its layouts'
#: values (``layouts``), their range over it (``spread``), the calls between the two counted runs
INSTRUCTIONS_CASE = {
    "name": TEXT,
    "per_call": NUMBER,
    "spread": NUMBER,
    "layouts": [NUMBER],
    "calls": NUMBER,
    "warmup": NUMBER,
}

#: what every record of one commit's run starts with (over C++, counts): the commit, when, how
#: long, by what command, on which machine and machine start
ONE_COMMIT = {
    "commit": TEXT,
    "rev": TEXT,
    "date": TEXT,
    "seconds": NUMBER,
    "build_seconds": NUMBER + OPTIONAL,
    "command": TEXT + OPTIONAL,
    "machine": MAPPING,
    "host": HOST,
}

#: per record type: {field: kind}, a kind being a CHECKS key (OPTIONAL at the end: None allowed
#: too), a tuple of the values allowed, or a nested shape (a dict, for a mapping; in a list, for
#: each item of a list)
SHAPES = {
    "build": {
        "commit": TEXT,
        "env": TEXT,
        "bindings": TEXT,
        "ok": FLAG,
        "packages": MAPPING,
        "seconds": NUMBER,
    },
    "step": {
        "kind": TEXT,
        "base": TEXT,
        "head": TEXT,
        "base_rev": TEXT,
        "head_rev": TEXT,
        "date": TEXT,
        "seconds": NUMBER,
        "build_seconds": NUMBER + OPTIONAL,
        "command": TEXT + OPTIONAL,
        "machine": MAPPING,
        "host": HOST,
        "settings": PAIRED_SETTINGS,
        "versions": MAPPING,
        "cases": [STEP_CASE],
        "skipped": MAPPING,
        "only": MAPPING,
        "errors": MAPPING,
        "lost": MAPPING,
        "expected": LIST,
        "env": MAPPING,
        "bindings": TEXT,
        "release_tags": LIST + OPTIONAL,
    },
    "bisect": {
        "base": TEXT,
        "head": TEXT,
        "date": TEXT,
        "cases": LIST + OPTIONAL,
        "found": [
            {
                "base": TEXT,
                "head": TEXT,
                "cases": [{"name": TEXT, "ratio": NUMBER, "low": NUMBER, "high": NUMBER}],
            }
        ],
        "spread": [{"commits": LIST, "cases": MAPPING}],
        "unconfirmed": [{"commits": LIST, "cases": LIST}],
        "answers": MAPPING,
        "rounds": LIST,
        "seconds": NUMBER,
        "command": TEXT + OPTIONAL,
        "machine": MAPPING,
    },
    "calibration": {
        "base": TEXT,
        "head": TEXT,
        "date": TEXT,
        "settings": PAIRED_SETTINGS,
        # beside them, a window A/A's (cuda-bench aa --window) says "engine": "window", "builds": N
        "thresholds": MAPPING,
    },
    "over-cpp": {
        **ONE_COMMIT,
        "settings": {"layouts": ("random", "fixed"), "state": ("fast", "all"), "processes": NUMBER},
        "versions": MAPPING + OPTIONAL,
        "twins": TEXT + OPTIONAL,
        "cases": [OVER_CPP_CASE],
        "skipped": MAPPING,
        "errors": MAPPING,
        "lost": MAPPING,
    },
    "counts": {
        **ONE_COMMIT,
        "versions": MAPPING,
        "settings": {"calls": NUMBER, "slow_calls": NUMBER, "runs": NUMBER, "warmup": TEXT},
        "mechanism": ("sys.monitoring", "sys.setprofile"),
        "cuda_counted": FLAG,
        "cuda_why": TEXT,
        "nvrtc_why": TEXT,
        "cases": [COUNTS_CASE],
        "skipped": MAPPING,
        "errors": MAPPING,
    },
    # what `import cuda.core` imports at a commit (cuda_bench.run.imports): each module as [name,
    # depth, self µs, cumulative µs], the fastest of ``runs`` fresh interpreters
    "imports": {
        **ONE_COMMIT,
        "versions": MAPPING,
        "statement": TEXT,
        "runs": NUMBER,
        "modules": LIST,
        "count": NUMBER,
        "total_us": NUMBER,
    },
    # one package tree compiled (cuda_bench.results.buildtime): not paired, one build's own CPU
    # seconds
    "compile": {
        "package": TEXT,
        "tree": TEXT,
        "commit": TEXT,
        "built": TEXT,
        "wall_seconds": NUMBER,
        "cpu_seconds": NUMBER,
        "jobs": NUMBER,
        "ccache": FLAG,
        "versions": MAPPING,
        "host": HOST,
    },
    "instructions": {
        **ONE_COMMIT,
        "versions": MAPPING,
        "valgrind": TEXT,
        "settings": {"fast": LIST, "slow": LIST, "layouts": NUMBER, "processes": NUMBER},
        "cases": [INSTRUCTIONS_CASE],
        "skipped": MAPPING,
        "errors": MAPPING,
    },
}


def problem(value, shape, where="record"):
    """What is wrong with ``value`` against ``shape`` (:data:`SHAPES`), or None."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return f"{where} is not a mapping"
        for key, kind in shape.items():
            if key not in value:
                return f"{where} has no {key!r}"
            found = problem(value[key], kind, f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where} is not a list"
        return next(
            (p for i, item in enumerate(value) if (p := problem(item, shape[0], f"{where}[{i}]"))),
            None,
        )
    if isinstance(shape, tuple):
        return (
            None
            if value in shape
            else f"{where} is {value!r}, not one of {', '.join(map(repr, shape))}"
        )
    optional = shape.endswith(OPTIONAL)
    if value is None and optional:
        return None
    check = CHECKS[shape.rstrip(OPTIONAL)]
    return (
        None
        if check(value)
        else f"{where} is {value!r}, not a{'n' if shape[0] in 'aeiou' else ''} {shape}"
    )


def fitting(shape):
    """A test of whether a value has ``shape`` (:data:`SHAPES`), made once per shape: reading the
    history checks every case of every record, so the common answer, yes, is made fast, and
    :func:`problem` says what is wrong only where something is."""
    if isinstance(shape, dict):
        # one expression over the fields, made once: no loop per record
        tests = {f"t{i}": fitting(kind) for i, kind in enumerate(shape.values())}
        body = " and ".join(f"{key!r} in v and t{i}(v[{key!r}])" for i, key in enumerate(shape))
        return eval(f"lambda v: type(v) is dict and {body or 'True'}", tests)
    if isinstance(shape, list):
        each = fitting(shape[0])
        return lambda v: isinstance(v, list) and all(map(each, v))
    if isinstance(shape, tuple):
        return lambda v: v in shape
    test = CHECKS[shape.rstrip(OPTIONAL)]
    return (lambda v: v is None or test(v)) if shape.endswith(OPTIONAL) else test


FITS = {kind: fitting(shape) for kind, shape in SHAPES.items()}


def check(record, kind):
    """``record`` when it is a record of type ``kind`` of the current schema with the right shape;
    RecordError saying why not."""
    if not isinstance(record, dict):
        raise RecordError("not a JSON object")
    if record.get("schema") != SCHEMA or record.get("record") != kind:
        raise RecordError(
            f"not a {kind} record of schema {SCHEMA} (it says {record.get('record')!r}, schema "
            f"{record.get('schema')!r}; `cuda-bench upgrade` brings older records up to date)",
            fix="",
        )
    if not FITS[kind](record):
        raise RecordError(problem(record, SHAPES[kind]) or "not of its type's shape")
    return record


# --- reading and writing --------------------------------------------------------------------------
def lines(path):
    """(line number, parsed JSON or the ValueError it raised) of each non-empty line of a ``.jsonl``
    file."""
    path = Path(path)
    if not path.exists():
        return []
    found = []
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        if line.strip():
            try:
                found.append((number, json.loads(line)))
            except ValueError as exc:  # not JSON (a write cut off), or not UTF-8
                exc.raw = line  # what could be read of it: the commits it names (asv_files.touches)
                found.append((number, exc))
    return found


def read(folder, kind):
    """The records of type ``kind`` of one machine's folder, oldest first; a line that does not
    parse, or is not such a record (:func:`check`), is left out with one line naming the file, the
    line, why and what to do, and noted (``asv_files.unreadable``)."""
    path = Path(folder) / FILES[kind]
    records = []
    for number, found in lines(path):
        try:
            if isinstance(found, ValueError):  # the parser's whole message: where on the line
                raise RecordError(f"does not parse ({found})")
            records.append(check(found, kind))
        except RecordError as exc:
            raw = getattr(found, "raw", b"") if isinstance(found, ValueError) else found
            said = asv_files.unreadable(path, exc, number, asv_files.touches(raw), exc.fix)
            if said:
                warn(f"{path}:{number}: {said}")
    return records


def stamped(record, kind):
    """``record`` as a record of type ``kind`` of the current schema."""
    return {"record": kind, "schema": SCHEMA, **record}


def append(folder, kind, record):
    """``record`` (of type ``kind``) as the last line of its file in ``folder``, on a line of its
    own even after a cut-off write. The record must have its type's shape: a record the readers
    would leave out is not written."""
    record = check(stamped(record, kind), kind)
    path = Path(folder) / FILES[kind]
    path.parent.mkdir(parents=True, exist_ok=True)
    cut = False
    if path.exists() and path.stat().st_size:
        with open(path, "rb") as f:
            f.seek(-1, 2)
            cut = f.read() != b"\n"
    with open(path, "a") as f:
        f.write(("\n" if cut else "") + json.dumps(record, sort_keys=True) + "\n")
    return record


def calibration(folder, engine="paired"):
    """{case: threshold} from every A/A calibration of the machine: for each case the highest, so
    that none of those A/A runs would have flagged it ({} before any; delete a line to forget a
    run). ``engine`` "paired": the two-build A/A runs (a paired step's thresholds); "window": those
    and the window A/A runs too (``cuda-bench aa --window``), since a window's intervals are the
    wider. A threshold that is not a finite number of at least :data:`MIN_THRESHOLD` is left out
    with a line naming it; one above :data:`MAX_THRESHOLD` is read as that, with a line."""
    out = {}
    for record in read(folder, "calibration"):
        if record.get("engine", "paired") not in ("paired", engine):
            continue
        for name, threshold in record["thresholds"].items():
            if not _number(threshold) or threshold < MIN_THRESHOLD:
                warn(
                    f"{Path(folder) / CALIBRATION}: {name}'s threshold {threshold!r} is not a "
                    f"number from {MIN_THRESHOLD} up; left out"
                )
                continue
            # a case so noisy that its A/A reached this far: the most any case needs
            if threshold > MAX_THRESHOLD:
                warn(
                    f"{Path(folder) / CALIBRATION}: {name}'s threshold {threshold!r} is above "
                    f"{MAX_THRESHOLD}; read as {MAX_THRESHOLD}"
                )
                threshold = MAX_THRESHOLD
            out[name] = max(threshold, out.get(name, 0))
    return out


# --- from earlier schemas -------------------------------------------------------------------------
def upgrade(folder):
    """Bring every record file of one machine's folder to the current schema, in place; the over-C++
    records of schema 1 lived in ``overhead.jsonl``. Returns {file name: records upgraded}. A line
    that is neither a record of an earlier schema nor one of this one stops the upgrade with
    RecordError before anything is written."""
    from cuda_bench.foundations.process import write_whole

    folder = Path(folder)
    old = folder / "overhead.jsonl"
    renamed = old.exists() and not (folder / OVER_CPP).exists()
    upgraded, done = {}, {}
    for kind, name in FILES.items():
        path = old if renamed and name == OVER_CPP else folder / name
        found = lines(path)
        if not found:
            continue
        new, count = [], 0
        for number, record in found:
            if isinstance(record, ValueError) or not isinstance(record, dict):
                raise RecordError(
                    f"{path}:{number} does not parse: fix or remove the line, then upgrade again"
                )
            if record.get("schema") != SCHEMA:
                record = stamped(UPGRADES[kind](record), kind)
                count += 1
            try:
                new.append(check(record, kind))
            except RecordError as exc:
                raise RecordError(f"{path}:{number}: {exc}") from None
        if count:
            upgraded[name] = new
        done[name] = count
    if renamed:
        old.rename(folder / OVER_CPP)
    for name, new in upgraded.items():
        write_whole(folder / name, "".join(json.dumps(r, sort_keys=True) + "\n" for r in new))
    return done


def _layouts(settings):
    """Schema 1: one layout per build where the workers said so (``aslr_off``) or the record does
    not say."""
    return "fixed" if settings.get("aslr_off") else settings.get("layouts") or "fixed"


def _host(host):
    """Schema 1's ``host``, with ``start``: the kernel's boot id, else the boot time, else None."""
    host = dict(host or {})
    host.setdefault("boot", None)
    host["start"] = host.get("boot_id") or host.get("boot")
    return host


def _step_bindings(step):
    """The cuda-bindings a schema 1 step was measured with, where the record does not say: read off
    the versions both sides ran with: 'auto' where they differ (across the CUDA 12/13 boundary),
    'source' for a local version (built from the commit), else the version."""
    versions = {
        (v or {}).get("cuda-bindings", "+unknown") for v in (step.get("versions") or {}).values()
    } or {"+"}
    if len(versions) > 1:
        return "auto"
    (version,) = versions
    return "source" if "+" in version else version


def _upgrade_step(record):
    return record | {
        "settings": record["settings"] | {"layouts": _layouts(record["settings"])},
        "host": _host(record.get("host")),
        "lost": record.get("lost") or {},
        "env": record.get("env") or {},
        "bindings": record.get("bindings") or _step_bindings(record),
        "release_tags": record.get("release_tags"),
    }


def _upgrade_calibration(record):
    return record | {"settings": record["settings"] | {"layouts": _layouts(record["settings"])}}


def _upgrade_over_cpp(record):
    cases = [{"version": None, "fast": None} | case for case in record["cases"]]
    return record | {
        "kind": "over-cpp",
        "settings": record["settings"]
        | {
            "layouts": _layouts(record["settings"]),
            "state": record["settings"].get("state") or "all",
        },
        "host": _host(record.get("host")),
        "twins": record.get("twins"),
        "lost": record.get("lost") or {},
        "cases": cases,
    }


UPGRADES = {
    "build": dict,
    "step": _upgrade_step,
    "calibration": _upgrade_calibration,
    "over-cpp": _upgrade_over_cpp,
    "counts": dict,
    "imports": dict,
    "compile": dict,
    "instructions": dict,
}
