"""Stage 3, results: the one reader of asv's results files
(``results/<machine>/<commit>-<env>.json``).

The line-per-record files next to them (builds, paired steps, calibrations, over-C++ runs, counts)
are read by ``cuda_bench.results.records``; the history they make together, by
``cuda_bench.results.history``. A results file that does not parse (a run killed mid-write, a bad
merge) is skipped with one line naming it.

Whatever a reader leaves out because it could not be read (a results file, a record's line,
``commits.json``) is noted here (:func:`unreadable`): what is left may say something else than the
whole history would (a flag whose recheck was cut off reads "not yet confirmed"; main's head, the
commit before it), so every command that read it exits 2 (``cuda_bench.cli``) and the pages and
reports name each file and line (:func:`noted`).
"""

from __future__ import annotations

import datetime
import itertools
import json
import math
import re
import statistics
import sys
from pathlib import Path

from cuda_bench.foundations.names import case_name, is_release_tag, release_version
from cuda_bench.foundations.paths import COMMITS, ROOT, machine_dirs, result_files


def warn(message):
    print(f"results: {message}", file=sys.stderr)


# --- what could not be read -----------------------------------------------------------------------
#: {(file, line or None): why}, in the order they were met: what this process's readers left out
UNREADABLE = {}
#: {(file, line): {"base", "head", "commit": a commit the line names}}: what a record line that
#: could not be read is about, as far as it could be read (:func:`touches`)
TOUCHED = {}
_NAMED = re.compile(rb'"(base|head|commit)": *"([0-9a-f]{40})"')
#: the (file, line or None) this command has named on stderr: each once, however often it is read
SAID = set()


def touches(record):
    """The commits a record names (``base``, ``head``, ``commit``), from the record or from what
    could be read of its line (bytes: a line cut off keeps the fields before the cut; a record is
    written with its keys in order, ``base`` first)."""
    if isinstance(record, dict):
        return {k: v for k, v in record.items() if k in ("base", "head", "commit") and v}
    found = {}
    for key, sha in _NAMED.findall(record if isinstance(record, bytes) else b""):
        found.setdefault(key.decode(), sha.decode())
    return found


def unreadable(path, why, line=None, named=None, fix=None):
    """Note that ``path`` could not be read (its ``line``: a line number, or a case's name where one
    number of it is meant), and why (an exception: the parser's whole message, line and column),
    ending with what to do (``fix``; :func:`remedy` unless given, "" for nothing more); ``named``:
    the commits it is about (:func:`touches`), where they could be read. Its text, where this
    command has yet to name it (its reader then says it in one line, and no reader says it again),
    else ""."""
    if isinstance(why, json.JSONDecodeError):
        why, line = f"does not parse ({why})", why.lineno
    fix = remedy(path, line) if fix is None else fix
    key = (Path(path).resolve(), line)
    UNREADABLE.setdefault(key, f"{why}; {fix}" if fix else str(why))
    if named:
        TOUCHED[key] = named
    new = key not in SAID
    SAID.add(key)
    return UNREADABLE[key] if new else ""


def remedy(path, line=None):
    """What to do about a part of the history that could not be read, by the file it is in: put
    the file back as git has it, or measure again, or (the budgets) mend the line."""
    path = Path(path).resolve()
    shown_path = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    back = f"restore it from git (`git checkout -- {shown_path}`)"
    if path.suffix == ".json5":
        return 'mend it: docs/guide.md ("Budgets") says what it holds'
    if path.name == COMMITS.name:
        return f"{back}; `cuda-bench publish --repo CLONE` then records the commits it lacks"
    if path.suffix == ".jsonl":
        return f"{back}, or delete that line"
    return f"{back}, or measure that commit again (`cuda-bench window COMMIT`)"


def touched(path, line):
    """The commits an unreadable ``line`` of ``path`` names ({} where none could be read)."""
    return TOUCHED.get((Path(path).resolve(), line), {})


def noted(under=None):
    """[(file, line or None, why)] of what could not be read, in the order met; ``under``: in that
    folder only."""
    root = Path(under).resolve() if under is not None else None
    return [
        (path, line, why)
        for (path, line), why in UNREADABLE.items()
        if root is None or path.is_relative_to(root)
    ]


def forget(under=None):
    """Start again: nothing noted (``under``: in that folder, read again by the same command, which
    does not name it again); without ``under``, a new command, which names anew what it meets."""
    for path, line, _ in noted(under):
        del UNREADABLE[(path, line)]
        TOUCHED.pop((path, line), None)
    if under is None:
        SAID.clear()


def place(line):
    """Where in a file the part that could not be read is, as the pages and reports say it after
    the file's name: " line 7", ", case bench_x.Y.time_y('core')" (one median of a results file),
    or "" (the whole file)."""
    if isinstance(line, str):
        return f", case {line}"
    return f" line {line}" if line else ""


def shown(path, results_dir):
    """How pages and reports name a file of the history: from the results folder on
    (``results/gpu-a/steps.jsonl``), never the publishing machine's own path."""
    root = Path(results_dir).resolve()
    path = Path(path).resolve()
    return (
        (Path(root.name) / path.relative_to(root)).as_posix()
        if path.is_relative_to(root)
        else path.name
    )


def unreadable_results(results_dir, machine, known=()):
    """{commit: (file as :func:`shown` names it, line, why)} of one machine's results files that
    could not be read (:func:`noted`): each commit named by the full hash ``known`` (``commits``)
    has for the file name's first 8 hex digits, else by the hash the file itself names, else by
    those 8 digits."""
    folder = (Path(results_dir) / machine).resolve()
    out = {}
    for path, line, why in noted(folder):
        if path.parent != folder or path.suffix != ".json" or path.name == "machine.json":
            continue
        if isinstance(line, str):  # one case's median: the file itself was read
            continue
        prefix = path.name.split("-", 1)[0].lower()
        full = [c for c in known if c.startswith(prefix)]
        try:
            found = re.search(rb'"commit_hash":\s*"([0-9a-f]{40})"', path.read_bytes())
        except OSError:
            found = None
        commit = full[0] if len(full) == 1 else found.group(1).decode() if found else prefix
        out.setdefault(commit, (shown(path, results_dir), line, why))
    return out


def say_unreadable(who):
    """At a command's end, one line saying how many parts of the history it could not read (each
    named once, where it was met); whether there was any."""
    found = noted()
    if found:
        print(
            f"{who}: {len(found)} part(s) of the history could not be read (each named above), and "
            "what this command said leaves them out",
            file=sys.stderr,
        )
    return bool(found)


def read(path):
    """One asv results file as a dict; ValueError or OSError when it does not parse or is not
    one."""
    data = json.loads(Path(path).read_text())
    if (
        not isinstance(data, dict)
        or "commit_hash" not in data
        or not isinstance(data.get("results"), dict)
        or not isinstance(data.get("result_columns"), list)
        or not all(isinstance(row, list) for row in data["results"].values())
    ):
        raise ValueError("not an asv results file")
    return data


def load(path):
    """One asv results file as a dict, or None (with a line naming it, and noted:
    :func:`unreadable`) when it does not parse."""
    try:
        data = read(path)
    except (OSError, ValueError) as exc:
        said = unreadable(path, exc)
        if said:
            warn(f"skipping {path}: {said}")
        return None
    found = impossible(data)
    for (name, combo), why in found.items():
        said = unreadable(path, why, case_name(name, combo))
        if said:
            warn(f"{path}: {case_name(name, combo)}: {said}")
    return without(data, found) if found else data


def possible(value, quartile):
    """Whether ``value`` can be asv's median of a case: a measurement's (a time is a finite number
    above 0), asv's "failed" (None) or its "skipped" (NaN, with no statistics beside it:
    ``quartile``, the case's first quartile, None). A NaN beside statistics is no skip."""
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return 0 < value < math.inf or (math.isnan(value) and quartile is None)


def impossible(data):
    """{(benchmark, params): why} of one results file's medians that no measurement can be
    (:func:`possible`)."""
    quartiles = values(data, "stats_q_25")
    return {
        key: f"asv's median is {value!r}, which no measurement can be (a time above 0)"
        for key, value in values(data).items()
        if not possible(value, quartiles.get(key))
    }


def without(data, found):
    """``data`` (one results file) with the medians of ``found`` (:func:`impossible`) as asv's
    "failed" (None), each named in ``data["unreadable"]`` ({(benchmark, params): why}) so that a
    page's cell says "unreadable", never a number nor a skip."""
    columns = data["result_columns"]
    at = columns.index("result")
    rows = dict(data["results"])
    for (name, combo), _ in found.items():
        row = list(rows[name])
        params = dict(zip(columns, row)).get("params") or []
        if params:
            medians = list(row[at])
            medians[list(itertools.product(*params)).index(combo)] = None
            row[at] = medians
        else:
            row[at] = None
        rows[name] = row
    return data | {"results": rows, "unreadable": dict(found)}


def load_machine(machine_dir):
    """The results files of one machine that parse, oldest commit first; of one commit measured in
    several environments, the one measured last comes last."""
    found = [d for d in map(load, result_files(machine_dir)) if d is not None]
    return sorted(found, key=_newest_last)


def measured_at(data):
    """When asv last started a benchmark of this results file (ms since the epoch; 0 when it says
    not)."""
    if "started_at" not in data["result_columns"]:  # read() checked the shapes
        return 0
    column = data["result_columns"].index("started_at")
    return max(
        (row[column] or 0 for row in data["results"].values() if len(row) > column), default=0
    )


def load_all(results_dir, bad=None, listed=None):
    """[(machine, results dict)] of every machine, each machine's newest commit last; ``bad``, a
    list, gets the path of each results file that could not be read (:func:`load`). ``listed``:
    ``commits.json`` as read (:func:`listed`): a results file of a commit it lacks is named, noted
    and left out too, since nothing places that commit on the pages (``cuda-bench publish --repo``
    records it)."""
    out = []
    for folder in machine_dirs(results_dir):
        found = []
        for path in result_files(folder):
            data = load(path)
            if data is not None and listed is not None and data["commit_hash"] not in listed:
                said = unreadable(
                    path,
                    f"its commit {data['commit_hash'][:9]} is not in {COMMITS.name}",
                    fix="`cuda-bench publish --repo CLONE` records it there from a clone of "
                    "cuda-python that has it",
                )
                if said:
                    warn(f"skipping {path}: {said}")
                data = None
            if data is None:
                if bad is not None:
                    bad.append(path)
            else:
                found.append(data)
        out += [(folder.name, data) for data in sorted(found, key=_newest_last)]
    return out


def _newest_last(data):
    return (data.get("date") or 0, measured_at(data))


#: the asv environment variable that names the cuda-bindings a results file was measured with
BINDINGS = "CUDA_BENCH_BINDINGS"


def shown_first(bindings, measured):
    """How a commit's builds rank for the pages and asv's graphs, which show one build per commit
    (never a mean of two builds' medians): cuda_bindings built from the commit itself
    (``bindings`` "source", the code the commit ships) before any wheel, then the one measured last
    (``measured``: ms since the epoch)."""
    return (bindings == "source", measured or 0)


def bindings_of(data):
    """The cuda-bindings one results file was measured with, as asv's matrix names it ("source",
    "13.3.1", "auto"), or "" where it does not say."""
    return (data.get("env_vars") or {}).get(BINDINGS, "")


def one_per_commit(runs):
    """Of one machine's results files (``runs``, in their order), the one build of each commit the
    pages show (:func:`shown_first`), in the same order."""
    best = {}
    for data in runs:
        rank = shown_first(bindings_of(data), measured_at(data))
        if data["commit_hash"] not in best or rank >= best[data["commit_hash"]][0]:
            best[data["commit_hash"]] = (rank, data)
    return [data for data in runs if best[data["commit_hash"]][1] is data]


def bad_files(results_dir):
    """The results files that do not parse or are no asv results (asv publish would choke on them):
    those :func:`load` skips, each named in a line and noted."""
    bad = []
    load_all(results_dir, bad)
    return bad


def values(data, column="result"):
    """{(benchmark, params tuple): value} of one results file's ``column`` (asv's medians by
    default; ``"samples"``: each case's recorded samples); params as asv writes them ("'core'")."""
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
    """{benchmark: asv's version of it} in one results file (a changed benchmark gets a new
    version)."""
    columns = data["result_columns"]
    return {name: dict(zip(columns, row)).get("version") for name, row in data["results"].items()}


def comparable(data, reference):
    """``values(data)`` of the benchmarks whose version is the one ``reference`` (a results file)
    has: numbers of an earlier version of a benchmark measured something else and are not compared
    with today's."""
    wanted, have = versions(reference), versions(data)
    return {
        key: value for key, value in values(data).items() if have.get(key[0]) == wanted.get(key[0])
    }


def suite(results_dir):
    """asv's benchmarks.json of a results directory: {benchmark: its description}."""
    path = Path(results_dir) / "benchmarks.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    return {name: b for name, b in data.items() if isinstance(b, dict)}


def listed(results_dir):
    """``results_dir/commits.json`` as read: {commit: what it says}, or None where there is none or
    it cannot be read (named in a line and noted: the pages then name commits by hash)."""
    path = Path(results_dir) / COMMITS.name
    if not path.exists():
        return None
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        found = exc
    if not isinstance(found, dict):
        why = (
            found
            if isinstance(found, Exception)
            else f"not a JSON object of commits (a {type(found).__name__})"
        )
        said = unreadable(path, why)
        if said:
            warn(f"{path}: {said}")
        return None
    return found


#: :func:`commits`' ``found`` when the caller has not read ``commits.json``
NOT_READ = object()


def commits(results_dir, runs=None, found=NOT_READ):
    """What the pages say of each commit a machine of ``results_dir`` measured: {commit: {"title",
    "date" (ms), "tags" (cuda-core release tags), "position" (on main's first-parent history, oldest
    1; None off it), "recorded"}} from ``results_dir/commits.json`` (``asvrun.record_commits``
    writes it when a commit is measured; ``found``: as :func:`listed` read it, where it was). Where
    there is no such file, or it cannot be read, each measured commit gets its results file's date,
    no title and no tag, and ``recorded`` False: still placed by date, and still on main; where
    there is one, the results files of a commit it lacks are left out (:func:`load_all`).
    ``runs``: the results files already read, so they are not read again."""
    found = listed(results_dir) if found is NOT_READ else found
    known = {
        sha: {
            "title": info.get("title") or "",
            "date": info.get("date") or 0,
            "tags": list(info.get("tags") or []),
            "position": info.get("position"),
            "recorded": True,
        }
        for sha, info in (found or {}).items()
        if isinstance(info, dict)
    }
    for _, data in load_all(results_dir, listed=found) if runs is None else runs:
        known.setdefault(
            data["commit_hash"],
            {
                "title": "",
                "date": data.get("date") or 0,
                "tags": [],
                "position": None,
                "recorded": False,
            },
        )
    return known


def release_name(info):
    """The cuda-core release tag of a commit (``commits()``'s entry), the newest where it has
    several, or None."""
    tags = sorted((t for t in info.get("tags") or [] if is_release_tag(t)), key=release_version)
    return tags[-1] if tags else None


def commit_name(commit, known):
    """How the pages name a commit: its release tag, else its first 9 hex digits."""
    return release_name(known.get(commit) or {}) or commit[:9]


# --- asv's results files written from the paired engine's samples ---------------------------------
def asv_suite(conf_path):
    """asv's own discovery of the suite, run in this interpreter: {benchmark: its description
    (params, version, ...)} as asv's benchmarks.json holds them, which it writes into the
    configuration's results folder as ``asv run`` does. The suite is this project's, not
    cuda-python's, so no commit of cuda-python is needed to discover it."""
    from asv import benchmarks, config, environment

    conf = config.Config.load(str(conf_path))
    conf.branches = []  # nothing to check out: discovery only imports the suite
    here = environment.ExistingEnvironment(conf, sys.executable, {}, {})
    found = benchmarks.Benchmarks.discover(conf, None, [here], [None])
    found.save()
    return dict(found)


def asv_environment(conf_path):
    """asv's one environment of ``conf_path`` (a derived asv.conf.json, one value per matrix
    entry): its ``name`` (the results files'), ``hashname`` (its folder's), ``python``,
    ``requirements`` and ``env_vars``, as ``asv run`` would make it."""
    from asv import config, environment

    conf = config.Config.load(str(conf_path))
    envs = list(environment.get_environments(conf, None, verbose=False))
    if len(envs) != 1:
        raise ValueError(f"{conf_path} describes {len(envs)} environments, not one")
    return envs[0]


def save_asv(
    conf_path, suite, machine_name, commit, date, samples, calls, skipped=None, only_missing=False
):
    """Write what the paired engine measured of ``commit`` as asv's results file of
    ``machine_name``, in the environment ``conf_path`` (a derived asv.conf.json) describes, with
    asv's own classes, names and statistics: ``samples`` {case: the time per call of each sample,
    ns}, ``calls`` {case: calls per sample}, ``skipped`` {case: why} (asv's "skipped", no value);
    ``suite``: :func:`asv_suite`. A benchmark none of whose cases was measured keeps what the file
    held (the C++ twins of an earlier asv run). asv's machine file of ``machine_name`` must exist
    (``machine.record``). ``only_missing``: the file's own values stand, and only the cases it
    holds none of (a case a window lost, measured again) take the new samples. The path written."""
    from asv import config
    from asv import results as asv_results
    from asv.machine import Machine
    from asv.runner import BenchmarkResult

    from cuda_bench.foundations.names import case_name

    conf = config.Config.load(str(conf_path))
    env = asv_environment(conf_path)
    host = Machine.load(machine_name=machine_name, interactive=False)
    host.save(conf.results_dir)
    params = dict(host.__dict__) | {"python": env.python} | dict(env.requirements)
    run = asv_results.Results(
        params, env.requirements, commit, date, env.python, env.name, env.env_vars
    )
    run.load_data(conf.results_dir)
    skipped = skipped or {}
    for name, described in suite.items():
        combos = list(itertools.product(*described["params"])) if described["params"] else [()]
        names = [case_name(name, combo) for combo in combos]
        if not any(n in samples or n in skipped for n in names):
            continue
        found = [[ns * 1e-9 for ns in samples[n]] if n in samples else None for n in names]
        numbers = [calls.get(n) if n in samples else None for n in names]
        kept = {}
        if only_missing:
            kept = only_the_missing(run, described, found)
            if kept is None:
                continue
            # a case kept as it was: no number, so asv keeps its statistics instead of recomputing
            chosen = kept.get("selected_idx", range(len(numbers)))
            numbers = [n if k in chosen else None for k, n in enumerate(numbers)]
        run.add_result(
            described,
            BenchmarkResult(
                result=[
                    statistics.median(s) if s else None for s in found
                ],  # add_result replaces each by asv's own statistic of its samples
                samples=found,
                number=numbers,
                errcode=0,
                stderr="",
                profile=None,
            ),
            **kept,
        )
    run.save(conf.results_dir)
    return Path(conf.results_dir) / asv_results.get_filename(machine_name, commit, env.name)


def only_the_missing(run, described, found):
    """How asv's ``add_result`` adds the new samples ``found`` of the benchmark ``described`` to
    asv's results ``run`` that hold some of its cases already: only to the cases ``run`` holds no
    value of (``selected_idx``), every other case keeping its value and asv's statistics, and the
    benchmark its start and duration; None where no new sample fills a case; {} where ``run`` holds
    nothing of this benchmark version (every new sample goes in)."""
    name = described["name"]
    if name not in run.get_result_keys({name: described}):
        return {}
    values = run.get_result_value(name, described["params"] or None)
    values = values if described["params"] else [values]
    selected = {k for k, value in enumerate(values) if value is None and found[k] is not None}
    if not selected:
        return None
    started = run.started_at.get(name)
    return {
        "selected_idx": selected,
        "started_at": (
            datetime.datetime.fromtimestamp(started / 1000, datetime.timezone.utc)
            if started is not None
            else None
        ),
        "duration": run.duration.get(name),
    }
