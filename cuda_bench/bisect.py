"""Stage 4, compare: the first commit between two at which cases got slower (``cuda-bench bisect``).

A span of commits (main's first-parent line from BASE to HEAD, both ends included) that fits one
block of the one-pass window (``window.BLOCK`` commits) is measured whole, in one pass: each
adjacent pair is a paired step. A longer one is narrowed by halves: BASE, the commit in the middle
and HEAD are measured in one pass, and each half whose step flags a case (its whole 95 % interval
beyond its threshold, as every step judges) is narrowed in turn, until a flagged step joins two
adjacent commits: that commit did it. Every commit is built once (the wheel cache), and each round
times its commits once, in one pass.

Where a span's steps flag nothing, the span is not narrowed further. Its steps' ratios chained
(their product) say whether the cases still got slower across it: the change is then spread over
several commits, none slow enough alone, and the answer lists the steps with their intervals;
otherwise nothing in the span made the cases slower. Several flagged steps are each narrowed: a
change in several commits is answered with each of them.

The measuring is passed in (``measure``: commits, oldest first -> their adjacent step records), so
that the order of measurement and the stop rule are this module's alone, tested on recorded steps.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from cuda_bench import paired
from cuda_bench.text import interval, times
from cuda_bench.window import BLOCK

#: a commit title's pull request, as GitHub's squash merges name it: "... (#1234)"
PR = re.compile(r"\(#(\d+)\)\s*$")


@dataclass
class Answer:
    """What a bisect found: ``found`` (the steps of adjacent commits that flagged a case, each a
    step record), ``spread`` ([(span, its steps)]: spans none of whose steps flags a case, across
    which the cases still got slower), ``unconfirmed`` ([(span, the step that flagged it)]: spans
    a flagged step opened whose own steps flag nothing and chain to no slowdown: the flag did not
    hold when measured again), ``rounds`` ([(the commits measured, their step records)], in the
    order measured)."""

    found: list = field(default_factory=list)
    spread: list = field(default_factory=list)
    unconfirmed: list = field(default_factory=list)
    rounds: list = field(default_factory=list)

    @property
    def timed(self):
        """How many commit timings the rounds took (a commit in two rounds counts twice)."""
        return sum(len(commits) for commits, _ in self.rounds)


def points(span, fits=BLOCK):
    """The commits of ``span`` (oldest first) one round measures: all of them where they fit one
    block, else its ends and the commit in the middle."""
    if len(span) <= fits:
        return list(span)
    return [span[0], span[(len(span) - 1) // 2], span[-1]]


def flagged(step, cases):
    """The cases of ``step`` (a step record) named in ``cases`` (all, where None) that regressed."""
    return [c for c in paired.regressions(step) if cases is None or c["name"] in cases]


def chained(steps, name):
    """``name``'s ratios over ``steps`` multiplied, and their intervals' low ends multiplied (a
    bound each step's interval holds it above), with its threshold (the largest of theirs) and how
    many steps measured it; None where a step did not measure it (identical builds measure nothing:
    a ratio of 1)."""
    ratio, low, threshold, measured = 1.0, 1.0, 0.0, 0
    for step in steps:
        if step.get("identical"):
            continue
        case = next((c for c in paired.counted(step) if c["name"] == name), None)
        if case is None:
            return None
        ratio, low, measured = ratio * case["ratio"], low * case["low"], measured + 1
        threshold = max(threshold, case.get("threshold", 0.0))
    return ratio, low, threshold, measured


def spread_cases(steps, cases):
    """The cases that got slower across ``steps`` though no step flagged them: over two steps or
    more, the low ends of their intervals multiplied lie beyond the largest of their thresholds, as
    a flag's whole interval must. {name: (chained ratio, chained low end)}."""
    names = {c["name"] for s in steps if not s.get("identical") for c in paired.counted(s)}
    out = {}
    for name in sorted(names if cases is None else names & set(cases)):
        found = chained(steps, name)
        if found and found[3] >= 2 and math.log(found[1]) > math.log1p(found[2]):
            out[name] = found[:2]
    return out


def bisect(span, measure, cases=None, fits=BLOCK, progress=None):
    """Narrow ``span`` (commits, oldest first: BASE to HEAD) to the commits at which ``cases`` (case
    names; None: every case) got slower. ``measure(commits)`` measures commits in one pass and
    returns the step record of each adjacent pair. An :class:`Answer`."""
    answer, open_spans = Answer(), [(list(span), None)]
    while open_spans:
        part, why = open_spans.pop(0)
        commits = points(part, fits)
        steps = measure(commits)
        answer.rounds.append((commits, steps))
        hits = [(i, step) for i, step in enumerate(steps) if flagged(step, cases)]
        if progress:
            progress(round_line(len(answer.rounds), commits, steps, cases))
        if not hits:
            if spread_cases(steps, cases):
                answer.spread.append((part, steps))
            elif why is not None:  # the flag that opened this span does not hold in its parts
                answer.unconfirmed.append((part, why))
            continue
        for i, step in hits:
            sub = part[part.index(commits[i]) : part.index(commits[i + 1]) + 1]
            if len(sub) == 2:
                answer.found.append(step)
            else:
                open_spans.append((sub, step))
    return answer


# --- what the history knows of a flag's commit ----------------------------------------------------
def record_of(answer, base, head, cases):
    """An :class:`Answer` as a ``bisect`` record's fields (``records.SHAPES``): each commit found
    with its flagged cases' ratios and intervals, each spread span with its chained ratios."""
    found = [
        {
            "base": s["base"],
            "head": s["head"],
            "cases": [
                {k: c[k] for k in ("name", "ratio", "low", "high")} for c in flagged(s, cases)
            ],
        }
        for s in answer.found
    ]
    spread = [
        {"commits": part, "cases": {n: r for n, (r, _) in spread_cases(steps, cases).items()}}
        for part, steps in answer.spread
    ]
    unconfirmed = [
        {"commits": part, "cases": [c["name"] for c in flagged(step, cases)]}
        for part, step in answer.unconfirmed
    ]
    rounds = [commits for commits, _ in answer.rounds]
    return {"base": base, "head": head, "cases": sorted(cases) if cases else None} | {
        "found": found,
        "spread": spread,
        "unconfirmed": unconfirmed,
        "rounds": rounds,
    }


def answered(step, name, bisects):
    """What the newest bisect from ``step``'s base to its head that asked about case ``name`` (of
    ``bisects``, oldest first) answered: ("found", [(commit, its case)]), ("spread", [commits]),
    ("unconfirmed", [commits]: a flag on the way did not hold when its span was measured again),
    ("nothing", None), or None where no bisect asked."""
    for record in reversed(bisects):
        if (record["base"], record["head"]) != (step["base"], step["head"]):
            continue
        if record.get("cases") is not None and name not in record["cases"]:
            continue
        hits = [
            (found["head"], case)
            for found in record["found"]
            for case in found["cases"]
            if case["name"] == name
        ]
        if hits:
            return "found", hits
        spread = [part["commits"] for part in record["spread"] if name in part["cases"]]
        if spread:
            return "spread", spread
        lost = [p["commits"] for p in record.get("unconfirmed", []) if name in p["cases"]]
        return ("unconfirmed", lost) if lost else ("nothing", None)
    return None


def command_for(step, name, known):
    """The ``cuda-bench bisect`` that finds which commit of a flagged ``step`` made case ``name``
    slower, where the step spans several commits of main (their places in ``known``,
    ``results.commits``); None where it joins adjacent commits (the head did it) or a place is
    not known."""
    places = [(known.get(step[side]) or {}).get("position") for side in ("base", "head")]
    if None in places or places[1] - places[0] < 2:
        return None
    benchmark = name.split("(", 1)[0]
    return f"cuda-bench bisect {step['base'][:12]} {step['head'][:12]} -b '^{re.escape(benchmark)}'"


# --- in words -------------------------------------------------------------------------------------
def round_line(number, commits, steps, cases):
    """One round in a line: the commits it measured and, per step, what it flagged."""
    said = []
    for step in steps:
        hit = flagged(step, cases)
        where = f"{step['base'][:9]}→{step['head'][:9]}"
        said.append(
            f"{where}: " + (", ".join(f"{c['name']} {interval(c)}" for c in hit) if hit else "same")
            if not step.get("identical")
            else f"{where}: identical builds"
        )
    return f"bisect: round {number}, {len(commits)} commits: " + "; ".join(said)


def pr_of(title):
    """The pull request a commit's title names ('... (#1234)'), or None."""
    m = PR.search(title or "")
    return int(m.group(1)) if m else None


def answer_lines(answer, cases, titles):
    """What the bisect says: each commit that made cases slower (its title, its pull request, each
    case's ratio with its interval and the commit before it), each span the change is spread over
    (its steps' ratios, chained), or that nothing in the span did; then the cost."""
    lines = []
    for step in answer.found:
        title = titles.get(step["head"], "")
        pr = pr_of(title)
        lines.append(
            f"found: {step['head'][:9]} {title!r}" + (f" (#{pr})" if pr else "") + ", against "
            f"{step['base'][:9]}: "
            + "; ".join(f"{c['name']} {interval(c)}" for c in flagged(step, cases))
        )
    for part, steps in answer.spread:
        spread = spread_cases(steps, cases)
        lines.append(
            f"spread over {part[0][:9]}..{part[-1][:9]} ({len(part) - 1} commits): no step alone "
            "flags "
            + ", ".join(
                f"{name} (chained {times(r)}, its steps' low ends chained {times(low)})"
                for name, (r, low) in spread.items()
            )
            + "; its steps: "
            + "; ".join(
                f"{s['base'][:9]}→{s['head'][:9]} "
                + ", ".join(interval(c) for c in paired.counted(s) if c["name"] in spread)
                for s in steps
                if not s.get("identical")
            )
        )
    for part, step in answer.unconfirmed:
        lines.append(
            f"not confirmed: {step['base'][:9]}→{step['head'][:9]} flagged "
            + ", ".join(f"{c['name']} {interval(c)}" for c in flagged(step, cases))
            + f", but measured again its {len(part) - 1} commits flag nothing and chain to no "
            "slowdown: measure the span again (a machine start of its own), or take it as noise"
        )
    if not answer.found and not answer.spread and not answer.unconfirmed:
        lines.append("found nothing: no step flags a case, and no case got slower across the steps")
    return lines
