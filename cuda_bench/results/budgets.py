"""Budgets: how much a call of cuda-python may cost, written once in ``budgets.json5`` (the top of
the repository) and judged by the pull-request gate (``cuda-bench compare``, ``asv continuous``) and
the front page alike. This module alone reads the file and judges against it.

Two budgets, per operation:

* ``python_over_cpp``: a cuda.core or cuda.bindings form's time per call over its C++ twin's, in ns,
  paired in one process (an over-C++ run: ``cuda_bench.compare.overcpp``). Every operation with a
  C++ twin has one: the file's ``default_ns``, else cuda-python's target (``text.TARGET_NS``, 1 µs,
  #1580). CuPy's forms are timed beside them and held to none: they are not cuda-python's.
* ``core_over_bindings``: cuda.core's form over cuda.bindings', paired process by process in the
  same over-C++ run (``overcpp_read.forms_compared``): a ratio, only where the file sets one.

A key under ``operations`` names a benchmark (``"bench_launch.Launch.time_launch"``: each of its
cases) or one case of it without its library (``"bench_launch.Launch.time_launch('16 ptr')"``);
the more particular key wins.

A budget verdict is a claim with an interval, as a paired step's is: "over" only where the whole
interval of the measured overhead (over one over-C++ run's processes: 95 %, or the interval's own
coverage, said, where a run had too few processes) lies above the budget, "within" only where the
whole interval lies below it, else "undecided" (the interval reaches the budget, or the record does
not say its coverage). One run's interval holds what varies between its processes, not what a
machine start fixes for the whole run, so a verdict stands as a regression does: "confirmed" once
runs on two machine starts read it, "not yet confirmed" on one start, "not reproduced" where another
run reads the opposite (:func:`status`). The gate says a call was taken over its budget by the
change only where the paired step flags the case slower and the head reads it over while the base
did not (:func:`against_base`).

The file is JSON5 (JSON with comments, read as asv.conf.json is, by ``json5``): {"python_over_cpp":
{"default_ns": N, "operations": {key: ns}}, "core_over_bindings": {"operations": {key: ratio}}}.
A file that cannot be read (not JSON5, an unknown table or key, a budget that is not a positive
number) is named with its line and why, noted (``asv_files.unreadable``: the command exits 2), and
no budget is judged.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import json5

from cuda_bench.foundations.names import TIMED_CODE, case_name, split_case
from cuda_bench.foundations.paths import BUDGETS
from cuda_bench.foundations.stats import CONFIDENCE
from cuda_bench.foundations.text import TARGET_NS, fmt_ns, interval, signed, times
from cuda_bench.results import asv_files, overcpp_read, records

OVER, WITHIN, UNDECIDED = "over", "within", "undecided"
VERDICTS = (OVER, UNDECIDED, WITHIN)  # the order a table lists them in
#: how a verdict of over or within stands over the commit's runs (:func:`status`), as a
#: regression's does (``summary.status``)
CONFIRMED, NOT_YET, NOT_REPRODUCED = "confirmed", "not yet confirmed", "not reproduced"
STATUSES = (CONFIRMED, NOT_YET, NOT_REPRODUCED)
PYTHON_OVER_CPP, CORE_OVER_BINDINGS = "python_over_cpp", "core_over_bindings"
#: the forms each budget holds: cuda-python's
FORMS = {PYTHON_OVER_CPP: ("core", "bindings"), CORE_OVER_BINDINGS: ("core",)}
#: the keys each table of the file may hold
KEYS = {PYTHON_OVER_CPP: ("default_ns", "operations"), CORE_OVER_BINDINGS: ("operations",)}


class BudgetError(ValueError):
    """What is wrong with the budgets file, and on which line (None: the file as a whole)."""

    def __init__(self, why, line=None):
        super().__init__(why)
        self.line = line


@dataclass(frozen=True)
class Budgets:
    """The budgets file, as read: ``error`` (the file's one line) where it could not be, and then
    no budget at all."""

    path: str
    default_ns: float = TARGET_NS
    #: {operation key: ns} and {operation key: ratio}
    over_cpp: dict = field(default_factory=dict)
    core_over_bindings: dict = field(default_factory=dict)
    error: str | None = None

    def budget(self, kind, name):
        """(budget, the key that set it: an operation key or "default") of ``kind`` for the case
        ``name``; (None, None) where none holds it."""
        if self.error or library(name) not in FORMS[kind]:
            return None, None
        table = self.over_cpp if kind == PYTHON_OVER_CPP else self.core_over_bindings
        for key in operation_keys(name):
            if key in table:
                return table[key], key
        return (self.default_ns, "default") if kind == PYTHON_OVER_CPP else (None, None)


def library(name):
    combo = split_case(name)[1]
    return combo[0].strip("'") if combo else None


def operation_keys(name):
    """The keys that can name the case ``name``, most particular first: the case without its
    library, then its benchmark."""
    benchmark, combo = split_case(name)
    return [case_name(benchmark, combo[1:]), benchmark] if combo[1:] else [benchmark]


# --- the file -------------------------------------------------------------------------------------
def _line_of(text, *keys):
    """The line of ``text`` where the last of ``keys`` (a path into the file's object) is set: each
    key looked for, quoted or not, after the line of the one before it; None where one is not
    found."""
    lines, line = text.splitlines(), 0
    for key in keys:
        pattern = re.compile(rf"""(?:["']{re.escape(key)}["']|(?<![\w.'"]){re.escape(key)})\s*:""")
        found = next((i for i in range(line, len(lines)) if pattern.search(lines[i])), None)
        if found is None:
            return None
        line = found
    return line + 1


def _budget(value, text, keys, what):
    where = ".".join(keys[:-1])
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BudgetError(
            f"{where}: {keys[-1]!r} is not a number ({value!r})", _line_of(text, *keys)
        )
    if value <= 0:
        raise BudgetError(
            f"{where}: {keys[-1]!r} is not a positive {what} ({value!r})", _line_of(text, *keys)
        )
    return float(value)


def _operations(text, kind, what, found):
    """{operation key: budget} of ``kind``'s ``operations``."""
    if not isinstance(found, dict):
        raise BudgetError(f"{kind}.operations is not an object", _line_of(text, kind, "operations"))
    out = {}
    for key, value in found.items():
        where = (kind, "operations", key)
        try:
            benchmark, combo = split_case(key)
        except ValueError:
            benchmark, combo = "", ()
        if benchmark.count(".") != 2 or ".time_" not in benchmark:
            raise BudgetError(
                f"{kind}.operations: {key!r} names no operation (a benchmark, "
                '"bench_launch.Launch.time_launch", or one of its cases without its library, '
                "\"bench_launch.Launch.time_launch('16 ptr')\")",
                _line_of(text, *where),
            )
        if combo and combo[0].strip("'") in TIMED_CODE:
            raise BudgetError(
                f"{kind}.operations: {key!r} names a library ({combo[0]}): a budget is an "
                f"operation's, for each of its forms ({', '.join(FORMS[kind])})",
                _line_of(text, *where),
            )
        out[key] = _budget(value, text, where, what)
    return out


def _shape(found, text):
    """BudgetError where ``found`` (the parsed file) holds a key the file may not."""
    if not isinstance(found, dict):
        raise BudgetError("is not an object of budgets", 1)
    for kind, value in found.items():
        if kind not in KEYS:
            raise BudgetError(
                f"unknown key {kind!r} (known: {', '.join(KEYS)})", _line_of(text, kind)
            )
        if not isinstance(value, dict):
            raise BudgetError(f"{kind} is not an object", _line_of(text, kind))
        for key in value:
            if key not in KEYS[kind]:
                raise BudgetError(
                    f"{kind}: unknown key {key!r} (known: {', '.join(KEYS[kind])})",
                    _line_of(text, kind, key),
                )


def parse(text, path=BUDGETS):
    """The budgets ``text`` (JSON5: JSON with comments) sets, as :class:`Budgets`; BudgetError
    (with its line) where it is not a budgets file."""
    try:
        found = json5.loads(text)
    except ValueError as exc:
        said = re.match(r"<string>:(\d+) (.*)", str(exc))
        why = said.group(2) if said else str(exc)
        raise BudgetError(
            f"does not parse as JSON5 ({why})", int(said.group(1)) if said else None
        ) from None
    _shape(found, text)
    over = found.get(PYTHON_OVER_CPP, {})
    default = over.get("default_ns", TARGET_NS)
    return Budgets(
        path=str(path),
        default_ns=_budget(default, text, (PYTHON_OVER_CPP, "default_ns"), "number of ns"),
        over_cpp=_operations(text, PYTHON_OVER_CPP, "number of ns", over.get("operations", {})),
        core_over_bindings=_operations(
            text,
            CORE_OVER_BINDINGS,
            "ratio",
            found.get(CORE_OVER_BINDINGS, {}).get("operations", {}),
        ),
    )


def read(path=None):
    """The budgets file at ``path``; where it is absent, the default alone (cuda-python's target
    over C++). A file that cannot be read is said in one line naming it, its line and why, and noted
    (``asv_files.unreadable``); its :class:`Budgets` then holds that line as ``error`` and no
    budget. ``path``: :data:`paths.BUDGETS` unless given."""
    path = Path(path or BUDGETS)
    try:
        return parse(path.read_text(encoding="utf-8"), path)
    except FileNotFoundError:
        return Budgets(path=str(path))
    except (OSError, UnicodeDecodeError, BudgetError) as exc:
        line = getattr(exc, "line", None)
        where = f"{path}:{line}" if line else f"{path}"
        said = asv_files.unreadable(path, f"{exc}; no budget judged", line)
        if said:
            print(f"budgets: {where}: {said}", file=sys.stderr)
        return Budgets(path=str(path), error=f"{where}: {exc}")


# --- judging --------------------------------------------------------------------------------------
def verdict(low, high, budget, coverage):
    """OVER where the whole interval [``low``, ``high``] lies above ``budget``, WITHIN where it lies
    below, else UNDECIDED; UNDECIDED too where the interval's ``coverage`` is not known (a record
    that does not say: no claim can be stated). The verdict holds at the interval's own coverage,
    which is said where it falls short of 95 % (:func:`coverage_text`)."""
    if coverage is None:
        return UNDECIDED
    if low > budget:
        return OVER
    if high < budget:
        return WITHIN
    return UNDECIDED


def status(said, each, budget):
    """Whether a verdict ``said`` (OVER or WITHIN) repeats over the commit's runs (``each``: every
    run's [machine start, low, high, coverage], ``overcpp_read.over_cpp_cases``), as a regression is
    confirmed (``stats.repeated_verdict``): NOT_REPRODUCED where a run reads the opposite verdict,
    CONFIRMED where runs on two machine starts read it, else NOT_YET (one start: a second run there
    does not count, and a start of None is one start); None for UNDECIDED. One run's interval holds
    its own processes' variation, not what a machine start fixes for the whole run (on the H200's
    28 fast-state runs of cb56ab9f9 one run's interval missed the runs' median 48 % of the time):
    the verdict stands once another start reads it too."""
    if said == UNDECIDED:
        return None
    opposite = WITHIN if said == OVER else OVER
    read = [(start, verdict(low, high, budget, coverage)) for start, low, high, coverage in each]
    if any(found == opposite for _, found in read):
        return NOT_REPRODUCED
    return CONFIRMED if len({start for start, found in read if found == said}) >= 2 else NOT_YET


def stands(j, said):
    """Whether judgement ``j`` reads ``said`` (OVER or WITHIN) and no run of its commit reads the
    opposite."""
    return j["verdict"] == said and j.get("status") != NOT_REPRODUCED


def judge(paired, forms, budgets):
    """Every budget that holds a measured case: ``paired`` ({case: its over-C++ measurement, with
    ``over_ns``, ``over_low``, ``over_high``, ``coverage``, ``cpp_ns`` and ``runs``, the runs it
    repeats over: ``overcpp_read.over_cpp_cases``}) against its ``python_over_cpp`` budget,
    ``forms`` ({case: ``overcpp_read.forms_compared``'s, with ``ratio``, ``low``, ``high``,
    ``coverage``, ``runs``}) against its ``core_over_bindings`` budget. One judgement each,
    {"case", "kind", "budget", "key", "value", "low", "high", "coverage", "verdict", "status"}
    (:func:`verdict`, :func:`status`; and the C++ twin's time, ``cpp_ns``), by verdict and case."""
    out = []
    for kind, measured, keys in (
        (PYTHON_OVER_CPP, paired, ("over_ns", "over_low", "over_high")),
        (CORE_OVER_BINDINGS, forms, ("ratio", "low", "high")),
    ):
        for name, found in measured.items():
            budget, key = budgets.budget(kind, name)
            if budget is None or not all(k in found for k in keys):
                continue
            value, low, high = (found[k] for k in keys)
            coverage = found.get("coverage")
            said = verdict(low, high, budget, coverage)
            each = (found.get("runs") or {}).get("each") or [[None, low, high, coverage]]
            out.append(
                {
                    "case": name,
                    "kind": kind,
                    "budget": budget,
                    "key": key,
                    "value": value,
                    "low": low,
                    "high": high,
                    "coverage": coverage,
                    "verdict": said,
                    "status": status(said, each, budget),
                }
                | ({"cpp_ns": found["cpp_ns"]} if "cpp_ns" in found else {})
            )
    return sorted(out, key=lambda j: (VERDICTS.index(j["verdict"]), j["case"], j["kind"]))


def over(judged):
    """The judgements that are over their budget."""
    return [j for j in judged if j["verdict"] == OVER]


def _call(j):
    """What a judgement is of: its case and its kind of budget (a cuda.core case has two)."""
    return j["case"], j["kind"]


def against_base(head, base, slower=(), identical=False):
    """``head``'s judgements (:func:`at_commit`'s) with each one's verdict and status at ``base``
    (the same case and kind; None where the base has no over-C++ record of it), in
    ``base_verdict`` and ``base_status``, and ``taken_over``: whether the change took the call over
    its budget. It did only where the paired step of the same record flags the case slower
    (``slower``: the names of the cases it flags), the head reads the call over and the base does
    not (within or undecided, or over where another of its runs reads within), each side judged by
    the same rule over its own runs (:func:`at_commit`). Two over-C++ runs of the same code read a
    call on either side of its budget often (on the H200's 61 runs of cb56ab9f9, 80 % of run
    pairs had such a call): without a change the paired step measured, a verdict that moved is the
    runs' noise. Between ``identical`` builds no call can have been taken over: the head's verdicts
    stand alone."""
    if identical:
        return head | {"base": base["commit"], "identical": True}
    at_base = {_call(j): j for j in base.get("judged", [])}
    for j in head.get("judged", []):
        was = at_base.get(_call(j))
        j["base_verdict"] = was and was["verdict"]
        j["base_status"] = was and was.get("status")
        j["step_slower"] = j["case"] in slower
        j["taken_over"] = bool(
            j["step_slower"] and stands(j, OVER) and was and not stands(was, OVER)
        )
    return (
        head
        | {"base": base["commit"]}
        | ({"base_missing": base["missing"]} if "missing" in base else {})
    )


def taken_over(judged):
    """The calls a change took over their budget (:func:`against_base`'s ``taken_over``). A call
    already over at the base, one the base has no record of, or one the paired step does not flag
    slower, is said, and fails no gate: the change did not, or cannot be shown to, put it there."""
    return [j for j in judged if j.get("taken_over")]


def at_commit(folder, commit, budgets):
    """What the gate judges of ``commit``: its over-C++ records in ``folder`` (results/<machine>),
    read as the front page reads them (``overcpp_read.over_cpp_cases``, ``forms_compared``: per
    case the run nearest the fast state shown, every run of its kind that is not in the slow state
    repeating it), against ``budgets``. {"commit", "runs", "newest" (the newest record's date),
    "judged"}, or with "missing" (why nothing could be judged) instead of "runs" and "newest"."""
    found = {"commit": commit, "judged": []}
    if budgets.error:
        return found | {"missing": f"the budgets file could not be read: {budgets.error}"}
    every = records.read(folder, "over-cpp")
    mine = [r for r in every if r["commit"] == commit]
    if not mine:
        return found | {
            "missing": f"no over-C++ record of {commit[:9]} in "
            f"{Path(folder) / records.FILES['over-cpp']} (`cuda-bench over-cpp {commit[:9]}` "
            "measures one there)"
        }
    versions = {name: b.get("version") for name, b in asv_files.suite(Path(folder).parent).items()}
    judged = judge_runs(mine, every, budgets, versions)
    return found | {"runs": len(mine), "newest": mine[-1]["date"], "judged": judged}


def judge_runs(runs, every, budgets, versions=None):
    """:func:`judge` of one commit's over-C++ ``runs`` (oldest first; ``every``: the machine's
    records, for the fast state; ``versions``: the suite's benchmark versions, which a measurement
    must have been made with), read as the front page reads them (``overview``): per case the run
    nearest the fast state shown, every run of its kind that is not in the slow state repeating it,
    and cuda.core over cuda.bindings from that same run (``overcpp_read.forms_in_runs``)."""
    picked = overcpp_read.over_cpp_cases(runs, every, versions)
    paired = {
        name: case | ({"runs": spread} if spread else {}) for name, (case, spread) in picked.items()
    }
    return judge(paired, overcpp_read.forms_in_runs(runs, picked), budgets)


# --- in words -------------------------------------------------------------------------------------
WHAT = {PYTHON_OVER_CPP: "over C++", CORE_OVER_BINDINGS: "cuda.core over cuda.bindings"}


def measured_text(j):
    """A judgement's measurement with its interval: '+1.20 µs [+1.10 µs, +1.30 µs]' over C++,
    '×1.053 [1.048, 1.056]' for cuda.core over cuda.bindings."""
    if j["kind"] == CORE_OVER_BINDINGS:
        return interval({"ratio": j["value"], "low": j["low"], "high": j["high"]})
    return f"{signed(j['value'] * 1e-9)} [{signed(j['low'] * 1e-9)}, {signed(j['high'] * 1e-9)}]"


def budget_text(j):
    """A judgement's budget: '1.00 µs' or '×1.100'; '(default)' where no key of the file set it."""
    said = times(j["budget"]) if j["kind"] == CORE_OVER_BINDINGS else fmt_ns(j["budget"])
    return said + (" (default)" if j["key"] == "default" else "")


def coverage_text(j):
    """What a judgement's interval covers: "95% over one run's processes", its own coverage where
    it falls short ("87.5% over ..."), or "coverage not recorded"."""
    coverage = j.get("coverage")
    if coverage is None:
        return "coverage not recorded"
    said = f"{CONFIDENCE:.0%}" if coverage >= CONFIDENCE else f"{coverage:.1%}".replace(".0%", "%")
    return f"{said} over one run's processes"


def line(j):
    """One judgement in a line: '`case`: over C++ +1.20 µs [+1.10 µs, +1.30 µs] (95% over one
    run's processes), budget 1.00 µs: **over**, not yet confirmed'."""
    return (
        f"`{j['case']}`: {WHAT[j['kind']]} {measured_text(j)} ({coverage_text(j)}), "
        f"budget {budget_text(j)}: **{j['verdict']}**"
        + (f", {j['status']}" if j.get("status") else "")
    )


def counts_text(judged, sep=", "):
    """How many judgements of each verdict, and of over and within how many stand how
    (:func:`status`): '2 over (1 confirmed, 1 not yet confirmed), 0 undecided, 1 within (1
    confirmed)'."""
    out = []
    for said in VERDICTS:
        mine = [j for j in judged if j["verdict"] == said]
        how = [(s, sum(j.get("status") == s for j in mine)) for s in STATUSES]
        out.append(
            f"{len(mine)} {said}"
            + (
                f" ({', '.join(f'{n} {s}' for s, n in how if n)})"
                if said != UNDECIDED and mine
                else ""
            )
        )
    return sep.join(out)


#: the rule a verdict follows, in words (the comment and the front page say it)
RULE = (
    "over only where the whole interval of one over-C++ run's processes ({coverage}, or the "
    "coverage shown where a run had too few processes) lies above the budget, within only where "
    "it lies below, else undecided. One run's verdict is not yet confirmed: it stands once runs "
    "on two machine starts read it (confirmed), and is not reproduced where another run reads the "
    "opposite"
).format(coverage=f"{CONFIDENCE:.0%}")


def summary_line(found):
    """:func:`at_commit`'s in one line: how many judgements of each verdict, or why none."""
    if "missing" in found:
        return f"not judged: {found['missing']}"
    return counts_text(found["judged"])


def markdown(found):
    """The pull-request comment's section on budgets (``found``: :func:`at_commit`'s)."""
    out = ["", "#### Budgets (`budgets.json5`)", ""]
    if "missing" in found:
        return [*out, f"Not judged: {found['missing']}."]
    judged = found["judged"]
    taken = taken_over(judged)
    lead = f"**{len(taken)} taken over budget by this change.** " if taken else ""
    out.append(
        f"{lead}{found['commit'][:9]}'s over-C++ runs ({found['runs']}, newest "
        f"{found['newest'][:10]}) against each budget: {summary_line(found)}. {RULE[0].upper()}"
        f"{RULE[1:]}. The change took a call over its budget only where the paired step flags its "
        "case slower, the head reads it over and the base did not."
        + (f" At the base: {found['base_missing']}." if found.get("base_missing") else "")
        + (
            " The two builds are identical: the change took no call over its budget."
            if found.get("identical")
            else ""
        )
    )
    shown = [j for j in judged if j["verdict"] != WITHIN]
    if shown:
        out.append("")
        out += [f"- {line(j)}{at_base_text(j)}" for j in shown]
    return out


def at_base_text(j):
    """What a head's judgement was at the base: ' (taken over by this change: within at the
    base)', ' (over at the base too)', ' (within at the base; the paired step does not flag the
    case slower)', ' (the base not judged)'."""
    if "base_verdict" not in j:
        return ""
    was = j["base_verdict"]
    if was is None:
        return " (the base not judged)"
    if j.get("taken_over"):
        return f" (taken over by this change: {was} at the base)"
    if j["verdict"] == OVER and was != OVER and not j.get("step_slower"):
        return f" ({was} at the base; the paired step does not flag the case slower)"
    return f" ({was} at the base)"
