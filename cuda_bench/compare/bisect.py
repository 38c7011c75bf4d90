"""Stage 4, compare: the first commit between two at which cases got slower (``cuda-bench bisect``).

The total first: BASE and HEAD are measured as a pair, a paired step of their own, for every case
asked about. A case whose total lies beyond its threshold (its whole 95 % interval, as every step
judges) got slower, and the bisect places it: at one commit, or spread over several. Its answer is
never "nothing". A case whose total is within its threshold is "nothing" only where it was measured
and no step on the way flags it.

Then the span (main's first-parent line from BASE to HEAD, both ends included) that fits one block
of the one-pass window (``window.BLOCK`` commits) is measured whole, in one pass: each adjacent pair
is a paired step. A longer one is narrowed by halves: BASE, the commit in the middle and HEAD are
measured in one pass, and each half whose step flags a case is narrowed in turn, following the cases
it flags, until a flagged step joins two adjacent commits: that commit did it. Every commit is built
once (the wheel cache), and each round times its commits once, in one pass.

Each case asked about gets one answer (:data:`ANSWERS`), whatever another case's flags did:

* ``found``: a step of adjacent commits flags it (each such commit is named);
* ``spread``: its total is beyond its threshold, and no step of the narrowest span that held it
  flags it: the change is spread over several commits, none slow enough alone; the answer lists the
  steps whose intervals lie above 1;
* ``unconfirmed``: a step flagged it, its span measured again flags it nowhere, and its total is
  within its threshold: the flag did not hold;
* ``unmeasured``: a step it had to be measured in could not measure it (an error), with that error;
* ``nothing``: its total was measured within its threshold, and no step flags it.

The command's exit status and the flag's page follow the worst answer over the cases asked about.

The measuring is passed in (``measure``: commits, oldest first -> their adjacent step records), so
that the order of measurement and the stop rule are this module's alone, tested on recorded steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cuda_bench.compare import paired
from cuda_bench.compare.window import BLOCK
from cuda_bench.foundations.status import INCOMPLETE, OK, REGRESSION, worst
from cuda_bench.foundations.text import interval

#: a commit title's pull request, as GitHub's squash merges name it: "... (#1234)"
PR = re.compile(r"\(#(\d+)\)\s*$")

FOUND, SPREAD, UNCONFIRMED, UNMEASURED, NOTHING = (
    "found",
    "spread",
    "unconfirmed",
    "unmeasured",
    "nothing",
)
#: every answer a case can get, the one that decides first
ANSWERS = (FOUND, SPREAD, UNCONFIRMED, UNMEASURED, NOTHING)
#: each answer's exit status (``cuda_bench.foundations.status``): the command's is the worst over
#: the cases
STATUS = {
    FOUND: REGRESSION,
    SPREAD: REGRESSION,
    UNCONFIRMED: INCOMPLETE,
    UNMEASURED: INCOMPLETE,
    NOTHING: OK,
}


@dataclass
class Answer:
    """What a bisect found: ``total`` (the step record of BASE against HEAD, measured first),
    ``found`` ([(a step of adjacent commits, the cases it flags that led there)]), ``spread``
    ([(span, its round's steps, cases)]: cases whose total is beyond their threshold and which no
    step of the span flags), ``unconfirmed`` ([(span, the step that flagged it, cases)]: flags that
    the span's own steps do not repeat, the total within the threshold), ``unmeasured`` ({case:
    why}: a step it had to be measured in could not), ``cases`` ({case asked about: its answer,
    :data:`ANSWERS`}), ``rounds`` ([(the commits measured, their step records)], in the order
    measured, the total first)."""

    total: dict | None = None
    found: list = field(default_factory=list)
    spread: list = field(default_factory=list)
    unconfirmed: list = field(default_factory=list)
    unmeasured: dict = field(default_factory=dict)
    cases: dict = field(default_factory=dict)
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


def case_in(step, name):
    """(``name``'s case in ``step``, None), or (None, why the step did not measure it: its error,
    why it was skipped, or "not measured")."""
    found = next((c for c in paired.counted(step) if c["name"] == name), None)
    if found is not None:
        return found, None
    for key, said in (("errors", "{}"), ("skipped", "skipped: {}"), ("only", "one build only: {}")):
        why = (step.get(key) or {}).get(name)
        if why:
            return None, said.format(why if isinstance(why, str) else "; ".join(map(str, why)))
    return None, "not measured"


def asked_in(step):
    """Every case a step record names (measured, failed, skipped or on one side), controls left
    out: what a bisect of every case asks about."""
    names = {c["name"] for c in paired.counted(step)}
    for key in ("errors", "skipped", "only"):
        names |= set(step.get(key) or {})
    return sorted(names - {c["name"] for c in step["cases"] if c.get("control")})


def bisect(span, measure, cases=None, fits=BLOCK, progress=None):
    """Narrow ``span`` (commits, oldest first: BASE to HEAD) to the commits at which ``cases`` (case
    names; None: every case) got slower, BASE against HEAD measured first. ``measure(commits)``
    measures commits in one pass and returns the step record of each adjacent pair. An
    :class:`Answer`."""
    answer, ends = Answer(), [span[0], span[-1]]
    (answer.total,) = measure(ends)
    answer.rounds.append((ends, [answer.total]))
    names = sorted(cases) if cases is not None else asked_in(answer.total)
    if progress:
        progress(total_line(answer.total, names))
    if answer.total.get("identical"):  # the same wheels at both ends: nothing can have changed
        answer.cases = dict.fromkeys(names, NOTHING)
        return answer
    slower = {c["name"] for c in flagged(answer.total, names)}
    open_spans = [(list(span), None, set(names))]
    while open_spans:
        part, why, following = open_spans.pop(0)
        commits = points(part, fits)
        steps = [answer.total] if commits == ends else measure(commits)
        if commits != ends:
            answer.rounds.append((commits, steps))
            if progress:
                progress(round_line(len(answer.rounds) - 1, commits, steps, following))
        placed = set()
        for i, step in enumerate(steps):
            hit = {c["name"] for c in flagged(step, following)}
            placed |= hit
            sub = part[part.index(commits[i]) : part.index(commits[i + 1]) + 1]
            if hit and len(sub) == 2:
                answer.found.append((step, sorted(hit)))
            elif hit:
                open_spans.append((sub, step, hit))
        # a span a flag opened follows the cases it flagged; the whole span, those whose total is
        # beyond the threshold
        left = following - placed if why is not None else (following & slower) - placed
        unplaced(answer, part, steps, why, sorted(left), slower)
    answer.cases = {name: answer_of(answer, name) for name in names}
    return answer


def unplaced(answer, part, steps, why, names, slower):
    """Cases ``names`` that no step of ``part``'s round (``steps``) flags, though the span was
    opened for them (by the step ``why``, or by their total): spread where their total is beyond
    the threshold, else not measured where a step could not measure them, else not confirmed."""
    spread, lost = [n for n in names if n in slower], []
    for name in (n for n in names if n not in slower):
        errors = [case_in(s, name)[1] for s in steps if not s.get("identical")]
        error = next((e for e in errors if e), None)
        if error:
            answer.unmeasured.setdefault(name, error)
        else:
            lost.append(name)
    if spread:
        answer.spread.append((part, steps, spread))
    if lost:
        answer.unconfirmed.append((part, why, lost))


def answer_of(answer, name):
    """The answer (:data:`ANSWERS`) of case ``name``: the first that holds of found, spread, not
    confirmed, not measured (a step could not, or BASE against HEAD could not), nothing."""
    if any(name in names for _, names in answer.found):
        return FOUND
    for kind, places in ((SPREAD, answer.spread), (UNCONFIRMED, answer.unconfirmed)):
        if any(name in names for *_, names in places):
            return kind
    if name in answer.unmeasured:
        return UNMEASURED
    _, why = case_in(answer.total, name)
    if why:
        answer.unmeasured[name] = why
        return UNMEASURED
    return NOTHING


def status_of(answer):
    """The exit status of a bisect's answer: the worst over the cases asked about (:data:`STATUS`:
    a commit found or a spread change, 1; a flag not confirmed or a case not measured, 2)."""
    return worst(STATUS[kind] for kind in answer.cases.values())


# --- what the history knows of a flag's commit ----------------------------------------------------
def total_of(answer, name):
    """``name``'s case of BASE against HEAD ({"ratio", "low", "high", "threshold"}), or None where
    that pair did not measure it (identical builds measure nothing)."""
    case, _ = case_in(answer.total, name) if answer.total else (None, None)
    return {k: case[k] for k in ("ratio", "low", "high", "threshold")} if case else None


def record_of(answer, base, head, cases):
    """An :class:`Answer` as a ``bisect`` record's fields (``records.SHAPES``): each commit found
    with its flagged cases' ratios and intervals, each spread span with its cases' totals, each
    flag not confirmed, and per case asked about its answer, its total and why it could not be
    measured."""
    found = [
        {
            "base": s["base"],
            "head": s["head"],
            "cases": [
                {k: c[k] for k in ("name", "ratio", "low", "high")} for c in flagged(s, names)
            ],
        }
        for s, names in answer.found
    ]
    spread = [
        {"commits": part, "cases": {n: total_of(answer, n)["ratio"] for n in names}}
        for part, _, names in answer.spread
    ]
    unconfirmed = [{"commits": part, "cases": names} for part, _, names in answer.unconfirmed]
    told = {
        name: {
            "answer": kind,
            "total": total_of(answer, name),
            "why": answer.unmeasured.get(name)
            or ("identical builds" if (answer.total or {}).get("identical") else None),
        }
        for name, kind in answer.cases.items()
    }
    rounds = [commits for commits, _ in answer.rounds]
    return {"base": base, "head": head, "cases": sorted(cases) if cases else None} | {
        "found": found,
        "spread": spread,
        "unconfirmed": unconfirmed,
        "answers": told,
        "rounds": rounds,
    }


def answered(step, name, bisects):
    """What the newest bisect from ``step``'s base to its head that asked about case ``name`` (of
    ``bisects``, oldest first) answered: (FOUND, [(commit, its case)]), (SPREAD, ([commits], the
    total)), (UNCONFIRMED, ([commits], the total)), (UNMEASURED, why), (NOTHING, (the total, why));
    None where no bisect asked."""
    for record in reversed(bisects):
        if (record["base"], record["head"]) != (step["base"], step["head"]):
            continue
        told = record["answers"].get(name)
        if told is None:  # a bisect that asked about other cases
            continue
        kind = told["answer"]
        if kind == FOUND:
            return FOUND, [
                (found["head"], case)
                for found in record["found"]
                for case in found["cases"]
                if case["name"] == name
            ]
        if kind in (SPREAD, UNCONFIRMED):
            places = [p["commits"] for p in record[kind] if name in p["cases"]]
            return kind, (places, told["total"])
        if kind == UNMEASURED:
            return UNMEASURED, told["why"]
        return NOTHING, (told["total"], told["why"])
    return None


def answered_text(told):
    """What a flag's page and the nightly issue say of a bisect's answer other than a commit found
    (:func:`answered`'s), in words: 'bisected: no commit made it slower (base to head ×1.002
    [0.998, 1.006])'."""
    kind, what = told
    if kind == SPREAD:
        places, total = what
        return (
            f"bisected: slower from base to head, {interval(total)}, spread over "
            f"{sum(len(p) - 1 for p in places)} commits, none slower alone"
        )
    if kind == UNCONFIRMED:
        total = what[1]
        return "bisected: the flag did not hold when its commits were measured again" + (
            f" (base to head {interval(total)})" if total else ""
        )
    if kind == UNMEASURED:
        return f"bisected: could not be measured ({what})"
    total, why = what
    return "bisected: no commit made it slower" + (
        f" (base to head {interval(total)})" if total else f" ({why})" if why else ""
    )


def command_for(step, name, known):
    """The ``cuda-bench bisect`` that finds which commit of a flagged ``step`` made case ``name``
    slower, where the step spans several commits of main (their places in ``known``,
    ``asv_files.commits``); None where it joins adjacent commits (the head did it) or a place is
    not known."""
    places = [(known.get(step[side]) or {}).get("position") for side in ("base", "head")]
    if None in places or places[1] - places[0] < 2:
        return None
    benchmark = name.split("(", 1)[0]
    return f"cuda-bench bisect {step['base'][:12]} {step['head'][:12]} -b '^{re.escape(benchmark)}'"


# --- in words -------------------------------------------------------------------------------------
def round_line(number, commits, steps, cases):
    """One round in a line: the commits it measured and, per step, what it flagged of ``cases``."""
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


def total_line(total, names):
    """BASE against HEAD in a line: the cases asked about that it flags, with their intervals, and
    how many it could not measure."""
    where = f"bisect: BASE against HEAD, {total['base'][:9]}→{total['head'][:9]}: "
    if total.get("identical"):
        return where + "identical builds (the same wheels): no case can have changed"
    hit = flagged(total, names)
    lost = sum(case_in(total, n)[0] is None for n in names)
    return (
        where
        + (
            "slower: " + ", ".join(f"{c['name']} {interval(c)}" for c in hit)
            if hit
            else f"no case of the {len(names)} asked about beyond its threshold"
        )
        + (f"; {lost} not measured" if lost else "")
    )


def pr_of(title):
    """The pull request a commit's title names ('... (#1234)'), or None."""
    m = PR.search(title or "")
    return int(m.group(1)) if m else None


#: up to how many cases the answer names one by one as "nothing" (more are counted in one line)
NAMED = 10


def answer_lines(answer, cases, titles):
    """What the bisect says, per case asked about (``cases``; every case, where None): each commit
    that made cases slower (its title, its pull request, each case's ratio with its interval and
    the commit before it), each case spread over commits (its total and the steps that carry it),
    each flag not confirmed, each case that could not be measured (why), and the cases in which
    nothing got slower (each total with its interval)."""
    lines = []
    for step, names in answer.found:
        title = titles.get(step["head"], "")
        pr = pr_of(title)
        lines.append(
            f"found: {step['head'][:9]} {title!r}" + (f" (#{pr})" if pr else "") + ", against "
            f"{step['base'][:9]}: "
            + "; ".join(f"{c['name']} {interval(c)}" for c in flagged(step, names))
        )
    ends = f"from {answer.total['base'][:9]} to {answer.total['head'][:9]}"
    for part, steps, names in answer.spread:
        lines += [spread_line(answer, part, steps, name, ends) for name in names]
    for part, step, names in answer.unconfirmed:
        for case in flagged(step, names):
            total = total_of(answer, case["name"])
            lines.append(
                f"not confirmed: {step['base'][:9]}→{step['head'][:9]} flagged {case['name']} "
                f"{interval(case)}, but measured again its {len(part) - 1} commits flag nothing, "
                + (
                    f"and {ends} it reads {interval(total)}, within its threshold"
                    if total
                    else "and BASE against HEAD could not measure it "
                    f"({case_in(answer.total, case['name'])[1]})"
                )
                + ": measure the span again (a machine start of its own), or take it as noise"
            )
    for name, kind in answer.cases.items():
        if kind == UNMEASURED:
            lines.append(f"could not be measured: {name}: {answer.unmeasured[name]}")
    lines += nothing_lines(answer, ends)
    return lines


def spread_line(answer, part, steps, name, ends):
    """A case spread over a span's commits: its total, and the steps whose intervals lie above 1
    (each is a slowdown, though within the threshold), else every step's interval."""
    total = total_of(answer, name)
    carried, every, lost = [], [], []
    for step in (s for s in steps if not s.get("identical")):
        case, why = case_in(step, name)
        where = f"{step['base'][:9]}→{step['head'][:9]}"
        if case is None:
            lost.append(f"{where} could not measure it ({why})")
            continue
        every.append(f"{where} {interval(case)}")
        if case["low"] > 1:
            carried.append(every[-1])
    steps_said = (
        "the steps whose intervals lie above 1: " + "; ".join(carried)
        if carried
        else "no step's interval alone lies above 1: " + "; ".join(every)
    )
    return (
        f"spread: {name} got slower {ends}, {interval(total)}, beyond its threshold "
        f"({total['threshold']:.1%}), and no step alone flags it; over "
        f"{part[0][:9]}..{part[-1][:9]} ({len(part) - 1} commits) {steps_said}"
        + "".join(f"; {x}" for x in lost)
    )


def nothing_lines(answer, ends):
    """The cases in which nothing got slower: each with its total, or, past :data:`NAMED`, how
    many."""
    nothing = [name for name, kind in answer.cases.items() if kind == NOTHING]
    if (answer.total or {}).get("identical"):
        return [
            f"nothing: {ends[5:].replace(' to ', ' and ')} build the same wheels (identical "
            f"builds): none of the {len(nothing)} cases asked about can have changed"
        ]
    if len(nothing) > NAMED:
        return [
            f"nothing: {len(nothing)} cases read within their thresholds {ends}, and no step "
            "flags them (each case's total, with its interval, is in the record: bisect.json)"
        ]
    return [
        f"nothing: {name} {ends} {interval(total)}, within its threshold "
        f"({total['threshold']:.1%}), and no step flags it"
        for name in nothing
        for total in [total_of(answer, name)]
    ]
