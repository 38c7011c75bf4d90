"""Numbers as text, the same in every report: the pull-request comment and the over-C++ table
(compare), the overview and the nightly issue (report, publish); the one target every over-C++
number is read against; and text from git (a commit's title, a branch's name) as Markdown shows it,
never as markup."""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

from cuda_bench.foundations.names import TIMED_CODE, library_of

TARGET_NS = 1000  # cuda-python #1580: under 1 us over the same call from C++


def number(value):
    return isinstance(value, (int, float)) and not math.isnan(value)


def asv_word(cell):
    """What a cell of the operations table says where asv's median is no number: "unreadable" (a
    median no measurement can be: ``asv_files.impossible``), "failed" (None) or "not measured"
    (skipped)."""
    if cell.get("unreadable"):
        return "unreadable"
    return "failed" if cell["value"] is None else "not measured"


def fmt(seconds):
    ns = seconds * 1e9
    return (
        f"{ns:.0f} ns" if ns < 1e3 else f"{ns / 1e3:.2f} µs" if ns < 1e6 else f"{ns / 1e6:.2f} ms"
    )


def fmt_ns(ns):
    return fmt(ns * 1e-9)


def signed(seconds):
    return ("-" if seconds < 0 else "+") + fmt(abs(seconds))


def times(value, digits=3):
    """A ratio or a factor, as every page and report writes one: '×1.053' (``digits`` after the
    point)."""
    return f"×{value:.{digits}f}"


def times_span(low, high, digits=2):
    """A range of ratios: '×0.98–1.02'."""
    return f"×{low:.{digits}f}–{high:.{digits}f}"


def interval(case):
    """A paired ratio with its interval, as every page and report prints it: '×1.053 [1.048,
    1.056]'."""
    return f"{times(case['ratio'])} [{case['low']:.3f}, {case['high']:.3f}]"


#: what the per-call times beside a paired ratio are, said in the column that holds them
PER_CALL = "medians per call, base → head"


def per_call(case):
    """A paired case's times per call, base → head, from the same measurement as its ratio
    (``base_ns``, ``head_ns``: the medians of all its samples, the machine's states mixed), as every
    report prints them beside the ratio: '2.29 µs → 1.58 µs'. Where their quotient lies outside
    the ratio's interval (the ratio is the median of the process pairs' ratios; in a mixture of
    states the two differ), that quotient is said, so the times read as the context they are:
    '2.29 µs → 699 ns (×0.305 between these medians: outside the interval)'."""
    base, head = case.get("base_ns"), case.get("head_ns")
    if not (number(base) and number(head)) or base <= 0:
        return "not recorded"
    said = f"{fmt_ns(base)} → {fmt_ns(head)}"
    quotient = head / base
    if case["low"] <= quotient <= case["high"]:
        return said
    return f"{said} (×{quotient:.3f} between these medians: outside the interval)"


def cleared_text(case):
    """What cleared a flag not reproduced (``cleared_by``, ``history.steps``): 'cleared by ×1.002
    [0.995, 1.009] (start 2026-12-04T00:00)'; '' for any other case."""
    found = case.get("cleared_by")
    if not found:
        return ""
    return f"cleared by {interval(found)} (start {(found.get('boot') or 'not recorded')[:16]})"


def last_line(error):
    """The line of an error's text that says what went wrong: its last (a worker's log tail comes
    first)."""
    lines = (error or "").strip().splitlines()
    return lines[-1] if lines else "?"


def fmt_net(seconds):
    """A net latency: fmt(), or "<0" when the call measured below the floor (noise; the true
    difference stays in overview.json)."""
    return "<0" if seconds < 0 else fmt(seconds)


def measurements(case):
    """Each measurement of a history step's case, oldest first, with the machine start it ran on:
    '×1.024 [1.015, 1.028] regression (start 2026-12-04T15:35); ×0.996 [0.993, 0.999] same (start
    ...)';
    a case measured once: '×1.024 [1.015, 1.028] (start 2026-12-04T15:35)'."""
    found = case.get("measurements") or [case]
    return "; ".join(
        f"{interval(m)}{' ' + m['verdict'] if len(found) > 1 else ''} "
        f"(start {(m.get('boot') or 'not recorded')[:16]})"
        for m in found
    )


def standing(case, versions=None):
    """How a history step's regression stands: 'confirmed on 2 machine starts', 'flagged on one
    machine start only, not yet confirmed' (``cuda-bench steps --recheck`` on another start measures
    it again), 'flagged on 2 machine starts, each with one layout per build (ASLR off), not yet
    confirmed: that layout repeats on every start' (``stats.repeated_verdict``), or 'not reproduced
    on another machine start'; '' for any other verdict. With the step's ``versions``, a regression
    of a library that is the same version on both sides says so (``unchanged``)."""
    starts = {
        m.get("start") for m in case.get("measurements") or [case] if m["verdict"] == "regression"
    }
    if case["verdict"] == "not reproduced":
        return "not reproduced on another machine start"
    if case["verdict"] != "regression":
        return ""
    same = unchanged(case["name"], versions)
    if case.get("confirmed"):
        said = f"confirmed on {len(starts)} machine starts"
    elif len(starts) > 1:
        said = (
            f"flagged on {len(starts)} machine starts, each with one layout per build (ASLR off), "
            "not yet confirmed: that layout repeats on every start"
        )
    else:
        said = "flagged on one machine start only, not yet confirmed"
    return said + (f"; {same}" if same else "")


def unchanged(name, versions):
    """'cuda-bindings 13.3.1 on both sides' when every distribution whose code a paired case's timed
    calls run (``names.TIMED_CODE``: for a cuda.core form, cuda-core and cuda-bindings) is the same
    version in both builds (``versions``: a record's {side: {distribution: version}}), else ''. Such
    a case ran the same code on both sides: what moved it lies outside it, in what else the process
    holds or in the machine start (on the H200, under one fixed layout, which cuda.core a process
    imports moved cuda.bindings calls by up to 6%; with a layout per process one form still moved,
    `cuPointerGetAttribute`'s: docs/method.md, rule 6)."""
    sides = [side or {} for side in (versions or {}).values()]
    found = {
        dist: {side.get(dist) for side in sides} for dist in TIMED_CODE.get(library_of(name), ())
    }
    present = {dist: seen for dist, seen in found.items() if seen != {None}}
    if (
        len(sides) != 2
        or not present
        or any(len(seen) > 1 or None in seen for seen in present.values())
    ):
        return ""
    return ", ".join(f"{dist} {seen.pop()}" for dist, seen in present.items()) + " on both sides"


def build_words(asked, version=None):
    """Which cuda-bindings a build ran, in the words every page uses: "built from the commit"
    (``asked`` "source", or a ``version`` of a git checkout: cuda_bindings built from the commit
    itself), "13.3.1 wheel" (the version its workers reported, or the one asked for), "the wheel the
    commit supports" (``asked`` "auto", the version not recorded)."""
    if asked == "source" or "+g" in (version or ""):  # a version built from a git checkout
        return "built from the commit"
    if version or (asked and asked != "auto"):
        return f"{version or asked} wheel"
    return "the wheel the commit supports" if asked == "auto" else "not recorded"


def date_text(ms):
    """A time in ms since the epoch as every page and report writes it, in UTC: ``2026-12-05 14:03
    UTC``; "not recorded" for none."""
    return (
        datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        if ms
        else "not recorded"
    )


# --- text from git in Markdown --------------------------------------------------------------------
#: what Markdown (GitHub's) would read as markup inside a line of prose: emphasis, code, links
#: (their brackets), table cells, strikethrough; escaped with a backslash. The characters of HTML
#: become entities.
_MARKDOWN = re.compile(r"[\\`*_\[\]|~]")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md(text):
    """Text from git (a commit's title) in Markdown prose: shown as it is, never as emphasis, a
    link, a table's cell border or an HTML tag."""
    text = re.sub(r"[&<>]", lambda m: _ENTITIES[m.group()], str(text))
    return _MARKDOWN.sub(lambda m: "\\" + m.group(), " ".join(text.split()))


def code(text):
    """Text from git (a branch, a revision as typed) as a Markdown code span, whatever backticks it
    holds: the fence one backtick longer than its longest run of them."""
    text = " ".join(str(text).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
