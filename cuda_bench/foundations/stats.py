"""The paired engine's statistics: from interleaved samples to a ratio, an interval and a verdict.

A process pair is two workers, one per build, on one core; they take turns sample by sample in ABBA
groups (A, B, B, A). The machine's state (the H200 VM's cores run at full or half speed for seconds
at a time) is the same for the four samples of a group, so the group's ratio ``(b1 + b2) / (a1 +
a2)`` is free of it, and a linear drift within the group cancels too. A pair's ratio is the median
of its groups'.
Process pairs differ by what a process brings (memory layout, allocator state): the case's ratio is
the median over pairs, and its interval a distribution-free confidence interval of that median
(order statistics of the pair ratios). The verdict compares the interval, not the point, with a
threshold.

Pure functions of numbers: tested on a scripted clock (tests/test_paired.py).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

CONFIDENCE = 0.95  # of each case's interval
DEFAULT_THRESHOLD = 0.02  # a case's threshold until an A/A calibration on the machine sets one
MIN_THRESHOLD = 0.01  # calibration never sets a threshold below this; records take none below it
MAX_THRESHOLD = 0.5  # records take no threshold above it: a case would never be flagged
# calibration: this many times the A/A interval's far end beyond 1. The far end of a 95% interval
# already bounds what a rebuild moved; a PR's own noise is in its own interval, which must clear the
# threshold whole. Leave-one-out over the 7 A/A runs recorded on the H200: no held-out case flagged
# at 1x, 1.5x or 2x, and only 1x flags the injected spin in every held-out run (docs/method.md, rule
# 4).
MARGIN = 1.0


def group_ratio(a1, b1, b2, a2):
    """One ABBA group: B's time over A's, both sides' two samples summed."""
    return (b1 + b2) / (a1 + a2)


def pair_ratio(groups):
    """A process pair's ratio: the median of its groups' ratios (groups: (a1, b1, b2, a2)
    tuples)."""
    return statistics.median(group_ratio(*g) for g in groups)


def binom_cdf(k, n):
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(0, k + 1)) / 2**n


def median_interval(values, confidence=CONFIDENCE):
    """(median, low, high, coverage): the order statistics x(k), x(n+1-k) with the largest k whose
    coverage ``1 - 2 P(Binomial(n, 1/2) <= k - 1)`` is at least ``confidence`` (k = 1, the extremes,
    when even those fall short: the coverage says so)."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("no values")
    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * binom_cdf(k, n) >= confidence:
        k += 1
    coverage = 1 - 2 * binom_cdf(k - 1, n) if n > 1 else 0.0
    return statistics.median(xs), xs[k - 1], xs[n - k], coverage


def fewest_pairs(confidence=CONFIDENCE):
    """The fewest values whose median has a ``confidence`` interval (:func:`median_interval`): the
    widest, the extremes x(1), x(n), covers ``1 - 2 / 2**n``."""
    n = 2
    while 1 - 2 * binom_cdf(0, n) < confidence:
        n += 1
    return n


def verdict(low, high, threshold):
    """ "regression" when the whole interval is above 1 + threshold, "improvement" when it is below
    1 / (1 + threshold), else "same" (no change beyond the threshold shown)."""
    if low > 1 + threshold:
        return "regression"
    if high < 1 / (1 + threshold):
        return "improvement"
    return "same"


VERDICTS = ("regression", "improvement", "same", "not reproduced")  # a history step's, on a case


def repeated_verdict(measurements):
    """The verdict on a case of a history step that was measured more than once.

    ``measurements`` is a list of (machine start, verdict, layouts) triples, oldest first; a machine
    start is what ``results.start_id`` reads off the record, ``layouts`` its engine's
    (``paired.Settings.layouts``; "fixed" for records older than the field). Returns (verdict,
    confirmed):

    * ("regression", True) when two flags are independent: on two machine starts, at least one of
      the two with a layout per process;
    * ("not reproduced", False) when a start that did not flag it measured it without a flag, or one
      whose flags all had one fixed layout measured it without a flag with a layout per process (the
      start is the same, so what differs is the layout);
    * ("regression", False) when it is flagged, but on one start only (a further measurement on the
      same start does not count) or only with one fixed layout per build. It is still a regression,
      but not yet confirmed;
    * with no regression flagged, (the newest verdict, None).

    The reasons for this rule. Within one start, pairing cancels the machine's state, but not
    something fixed for the whole start: on the H200 the step 76bac4e11 -> c278ecb3d flagged
    ProgramOptionsCreate('core') ×1.024 [1.015, 1.028] on one start, though the module it calls was
    byte-identical on both sides, and another start read ×0.996 [0.993, 0.999] and ×0.999 [0.997,
    1.001] (docs/method.md, rule 11). And with ASLR off a build's layout is the same on every start,
    so a layout artefact repeats there: leaving cuda.core out of one side flagged the same 9-11
    cuda.bindings forms on three starts under one layout, 1 with a layout per process
    (docs/method.md, rule 6). A start of None (a record that does not say) is one start: such
    records cannot confirm or clear one another."""
    flagged = _flagged(measurements)
    if not flagged:
        return measurements[-1][1], None
    # that flag, and another start's
    if len(flagged) > 1 and any("random" in kinds for kinds in flagged.values()):
        return "regression", True
    return ("not reproduced", False) if clearing(measurements) else ("regression", False)


def _flagged(measurements):
    """{machine start: the layouts of its flags} of (start, verdict, layouts) triples."""
    flagged = {}
    for start, found, layouts in measurements:
        if found == "regression":
            flagged.setdefault(start, set()).add(layouts)
    return flagged


def clearing(measurements):
    """The indices of the measurements (as :func:`repeated_verdict` takes them) that clear a flag:
    made without a flag on a start that did not flag it, or with a layout per process on a start
    whose flags all had one fixed layout. [] where none does (or nothing was flagged)."""
    flagged = _flagged(measurements)
    if not flagged:
        return []
    return [
        i
        for i, (start, found, layouts) in enumerate(measurements)
        if found != "regression"
        and (start not in flagged or (layouts == "random" and flagged[start] == {"fixed"}))
    ]


#: how a slowdown of the history stands, in the words every page, report and issue says it
#: (:func:`repeated_verdict` decides it)
CONFIRMED_RULE = (
    "a slowdown is confirmed once two machine starts flag it, at least one of the "
    "two with a memory layout per process; not yet confirmed before that; not "
    "reproduced when another start (or, after flags with one fixed layout, a layout "
    "per process) measured it without a flag"
)


@dataclass
class CaseResult:
    name: str
    ratio: float  # median over process pairs of B/A
    low: float
    high: float
    coverage: float
    verdict: str
    threshold: float
    pairs: list  # each pair's ratio
    # median per-call time of A's samples, all pairs (mixed machine states: context only)
    base_ns: float
    head_ns: float
    groups: int  # ABBA groups, all pairs
    calls: int  # calls per sample
    control: bool = False  # C++ twin or harness floor: never a regression of a commit

    def summary(self):
        return {
            "name": self.name,
            "ratio": round(self.ratio, 5),
            "low": round(self.low, 5),
            "high": round(self.high, 5),
            "verdict": self.verdict,
            "threshold": self.threshold,
            "coverage": round(self.coverage, 4),
            "pairs": [round(r, 5) for r in self.pairs],
            "base_ns": round(self.base_ns, 2),
            "head_ns": round(self.head_ns, 2),
            "groups": self.groups,
            "calls_per_sample": self.calls,
            "control": self.control,
        }


def analyse(name, per_pair, threshold, control=False, confidence=CONFIDENCE):
    """A case's result from its process pairs: one ``(calls per sample, [(a1, b1, b2, a2), ...])``
    each."""
    per_pair = [(calls, groups) for calls, groups in per_pair if groups]
    pairs = [pair_ratio(groups) for _, groups in per_pair]
    ratio, low, high, coverage = median_interval(pairs, confidence)
    a = [s / calls for calls, groups in per_pair for g in groups for s in (g[0], g[3])]
    b = [s / calls for calls, groups in per_pair for g in groups for s in (g[1], g[2])]
    # a verdict is a claim: it needs an interval of the stated confidence (6 process pairs or more)
    found = "same" if control or coverage < confidence else verdict(low, high, threshold)
    return CaseResult(
        name,
        ratio,
        low,
        high,
        coverage,
        found,
        threshold,
        pairs,
        statistics.median(a),
        statistics.median(b),
        sum(len(groups) for _, groups in per_pair),
        int(statistics.median(calls for calls, _ in per_pair)),
        control,
    )


# The state over-C++ ratios are read in: on the H200 VM a worker process runs its Python either in a
# fast state or about twice as slowly (from outside the VM, most likely another tenant on the same
# physical core; more processes land in it the more of this run's workers run at once), while its
# C++ twin slows only ~1.2x, so the ratio itself depends on the state.
# A process is in the fast state when its Python time is within FAST_WINDOW of the FAST_ANCHOR-th
# fastest process's (the third: one odd process does not set the scale). docs/method.md, rule 12.
FAST_WINDOW = 1.15
FAST_ANCHOR = 2


def fast_state(py_ns, window=FAST_WINDOW, anchor=FAST_ANCHOR):
    """Indices of the processes in the fast state, from each process's median Python time."""
    scale = sorted(py_ns)[min(anchor, len(py_ns) - 1)]
    return [i for i, t in enumerate(py_ns) if t <= window * scale]


def over_cpp(name, twin, per_process, confidence=CONFIDENCE):
    """Python over C++ for one case, from worker processes that each timed the case and its C++ twin
    in turn (``per_process``: lists of ABBA groups ``(c1, p1, p2, c2)`` in ns per call): per process
    the median of the groups' ratios ``(p1 + p2) / (c1 + c2)``, of their differences and of the
    Python times. The case's ratio and difference are the medians over the processes in the fast
    state (:func:`fast_state`), with order-statistic intervals as for a paired case; ``fast`` says
    how many processes that is and ``all`` gives the medians over every process. Each process's
    ratio and Python time are kept (``process_ratios``, ``process_py_ns``), so a record can be read
    again another way."""
    per_process = [groups for groups in per_process if groups]
    ratios = [statistics.median((p1 + p2) / (c1 + c2) for c1, p1, p2, c2 in g) for g in per_process]
    diffs = [
        statistics.median((p1 + p2 - c1 - c2) / 2 for c1, p1, p2, c2 in g) for g in per_process
    ]
    py_ns = [statistics.median((p1 + p2) / 2 for _, p1, p2, _ in g) for g in per_process]
    fast = fast_state(py_ns)

    def summary(chosen):
        ratio, low, high, coverage = median_interval([ratios[i] for i in chosen], confidence)
        diff, diff_low, diff_high, _ = median_interval([diffs[i] for i in chosen], confidence)
        groups = [per_process[i] for i in chosen]
        cpp = statistics.median(c for g in groups for c1, _, _, c2 in g for c in (c1, c2))
        py = statistics.median(p for g in groups for _, p1, p2, _ in g for p in (p1, p2))
        return {
            "ratio": round(ratio, 4),
            "low": round(low, 4),
            "high": round(high, 4),
            "coverage": round(coverage, 4),
            "over_ns": round(diff, 1),
            "over_low": round(diff_low, 1),
            "over_high": round(diff_high, 1),
            "py_ns": round(py, 1),
            "cpp_ns": round(cpp, 1),
        }

    return {
        "name": name,
        "twin": twin,
        **summary(fast),
        "fast": len(fast),
        "all": summary(range(len(ratios))),
        "processes": len(per_process),
        "groups": sum(map(len, per_process)),
        "process_ratios": [round(r, 4) for r in ratios],
        "process_py_ns": [round(t, 1) for t in py_ns],
    }


def calibrate(cases, margin=MARGIN, floor=MIN_THRESHOLD):
    """Per-case thresholds from an A/A run (the same build on both sides): ``margin`` times the
    farthest the case's interval reached from 1 in either direction (``high - 1``, ``1 / low - 1``),
    never below ``floor``, rounded up to 0.1%. Every case of that A/A run would have stayed silent
    under its threshold."""
    out = {}
    for case in cases:
        if case.get("control"):
            continue
        reach = max(case["high"] - 1, 1 / case["low"] - 1, 0)
        # 1.012: 1.2%, not 1.3%; never above MAX_THRESHOLD, which a reader takes as the most a case
        # can need
        out[case["name"]] = min(
            MAX_THRESHOLD, max(floor, math.ceil(round(margin * reach * 1000, 6)) / 1000)
        )
    return out
