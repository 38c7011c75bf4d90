"""Budgets: how much a call of cuda-python may cost, written once in ``budgets.json5`` (the top of
the repository) and judged by the pull-request gate (``cuda-bench compare``, ``asv continuous``) and
the front page alike. This module alone reads the file and judges against it.

Two budgets, per operation:

* ``python_over_cpp``: a cuda.core or cuda.bindings form's time per call over its C++ twin's, in ns,
  paired in one process (an over-C++ run: ``cuda_bench.overcpp``). Every operation with a C++ twin
  has one: the file's ``default_ns``, else cuda-python's target (``text.TARGET_NS``, 1 µs, #1580).
  CuPy's forms are timed beside them and held to none: they are not cuda-python's.
* ``core_over_bindings``: cuda.core's form over cuda.bindings', paired process by process in the
  same over-C++ run (``overcpp_read.forms_compared``): a ratio, only where the file sets one.

A key under ``operations`` names a benchmark (``"bench_launch.Launch.time_launch"``: each of its
cases) or one case of it without its library (``"bench_launch.Launch.time_launch('16 ptr')"``);
the more particular key wins.

A budget verdict is a claim with an interval, as a paired step's is: "over" only where the whole
95 % interval of the measured overhead lies above the budget, "within" only where the whole interval
lies below it, else "undecided" (the interval reaches the budget, or too few processes give no 95 %
interval).

The file is JSON5 (JSON with comments, read as asv.conf.json is, by ``json5``): {"python_over_cpp":
{"default_ns": N, "operations": {key: ns}}, "core_over_bindings": {"operations": {key: ratio}}}.
A file that cannot be read (not JSON5, an unknown table or key, a budget that is not a positive
number) is named with its line and why, noted (``results.unreadable``: the command exits 2), and no
budget is judged.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import json5

from cuda_bench import overcpp_read, records, results
from cuda_bench.names import TIMED_CODE, case_name, split_case
from cuda_bench.paths import BUDGETS
from cuda_bench.stats import CONFIDENCE
from cuda_bench.text import TARGET_NS, fmt_ns, interval, signed, times

OVER, WITHIN, UNDECIDED = "over", "within", "undecided"
VERDICTS = (OVER, UNDECIDED, WITHIN)  # the order a table lists them in
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
    (``results.unreadable``); its :class:`Budgets` then holds that line as ``error`` and no
    budget. ``path``: :data:`paths.BUDGETS` unless given."""
    path = Path(path or BUDGETS)
    try:
        return parse(path.read_text(encoding="utf-8"), path)
    except FileNotFoundError:
        return Budgets(path=str(path))
    except (OSError, UnicodeDecodeError, BudgetError) as exc:
        line = getattr(exc, "line", None)
        where = f"{path}:{line}" if line else f"{path}"
        said = results.unreadable(path, f"{exc}; no budget judged", line)
        if said:
            print(f"budgets: {where}: {said}", file=sys.stderr)
        return Budgets(path=str(path), error=f"{where}: {exc}")


# --- judging --------------------------------------------------------------------------------------
def verdict(low, high, budget, coverage=1.0, confidence=CONFIDENCE):
    """OVER where the whole interval [``low``, ``high``] lies above ``budget``, WITHIN where it lies
    below, else UNDECIDED; UNDECIDED too where the interval's ``coverage`` falls short of
    ``confidence`` (too few processes for a 95 % interval)."""
    if coverage < confidence:
        return UNDECIDED
    if low > budget:
        return OVER
    if high < budget:
        return WITHIN
    return UNDECIDED


def judge(paired, forms, budgets, confidence=CONFIDENCE):
    """Every budget that holds a measured case: ``paired`` ({case: its over-C++ measurement, with
    ``over_ns``, ``over_low``, ``over_high``, ``coverage``, ``cpp_ns``}) against its
    ``python_over_cpp`` budget, ``forms`` ({case: ``overcpp_read.forms_compared``'s, with
    ``ratio``, ``low``, ``high``, ``coverage``}) against its ``core_over_bindings`` budget. One
    judgement each, {"case", "kind", "budget", "key", "value", "low", "high", "verdict"} (and the
    C++ twin's time, ``cpp_ns``), by case."""
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
            coverage = found.get("coverage", 0.0)
            out.append(
                {
                    "case": name,
                    "kind": kind,
                    "budget": budget,
                    "key": key,
                    "value": value,
                    "low": low,
                    "high": high,
                    "verdict": verdict(low, high, budget, coverage, confidence),
                }
                | ({"cpp_ns": found["cpp_ns"]} if "cpp_ns" in found else {})
            )
    return sorted(out, key=lambda j: (VERDICTS.index(j["verdict"]), j["case"], j["kind"]))


def over(judged):
    """The judgements that are over their budget."""
    return [j for j in judged if j["verdict"] == OVER]


def against_base(head, base, identical=False):
    """``head``'s judgements (:func:`at_commit`'s) with each one's verdict at ``base`` (the same
    case and kind; None where the base has no over-C++ record of it), in ``base_verdict``. Between
    ``identical`` builds no call can have been taken over by the change (a verdict that moved is
    the two over-C++ runs' noise): the head's verdicts stand alone."""
    if identical:
        return head | {"base": base["commit"], "identical": True}
    at_base = {(j["case"], j["kind"]): j["verdict"] for j in base.get("judged", [])}
    for j in head.get("judged", []):
        j["base_verdict"] = at_base.get((j["case"], j["kind"]))
    return (
        head
        | {"base": base["commit"]}
        | ({"base_missing": base["missing"]} if "missing" in base else {})
    )


def taken_over(judged):
    """The calls a change took over their budget: over at the head, not over at the base (within
    or undecided there). A call already over at the base, or one the base has no record of, is
    said, and fails no gate: the change did not, or cannot be shown to, put it there."""
    return [j for j in over(judged) if j.get("base_verdict") in (WITHIN, UNDECIDED)]


def at_commit(folder, commit, budgets):
    """What the gate judges of ``commit``: its over-C++ records in ``folder`` (results/<machine>),
    read as the front page reads them (``overcpp_read.over_cpp_cases``, ``forms_compared``),
    against ``budgets``. {"commit", "runs", "newest" (the newest record's date), "judged"}, or with
    "missing" (why nothing could be judged) instead of "runs" and "newest"."""
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
    paired = {name: case for name, (case, _) in overcpp_read.over_cpp_cases(mine, every).items()}
    judged = judge(paired, overcpp_read.forms_compared(mine), budgets)
    return found | {"runs": len(mine), "newest": mine[-1]["date"], "judged": judged}


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


def line(j):
    """One judgement in a line: '`case`: over C++ +1.20 µs [+1.10 µs, +1.30 µs] (95 %), budget
    1.00 µs: over'."""
    return (
        f"`{j['case']}`: {WHAT[j['kind']]} {measured_text(j)} ({CONFIDENCE:.0%}), "
        f"budget {budget_text(j)}: **{j['verdict']}**"
    )


def summary_line(found):
    """:func:`at_commit`'s in one line: how many judgements of each verdict, or why none."""
    if "missing" in found:
        return f"not judged: {found['missing']}"
    judged = found["judged"]
    return ", ".join(f"{sum(j['verdict'] == v for j in judged)} {v}" for v in VERDICTS)


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
        f"{found['newest'][:10]}) against each budget: {summary_line(found)}. Over only where the "
        f"whole {CONFIDENCE:.0%} interval lies above the budget; the gate fails on a call over "
        "at the head and not at the base."
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
    base)', ' (over at the base too)', ' (the base not judged)'."""
    if "base_verdict" not in j:
        return ""
    was = j["base_verdict"]
    if was is None:
        return " (the base not judged)"
    if j["verdict"] == OVER and was != OVER:
        return f" (taken over by this change: {was} at the base)"
    return f" ({was} at the base)"
