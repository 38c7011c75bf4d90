"""The exit statuses every command returns (``cuda_bench.cli``), what each means, and how several
make one.

1 is a regression (or a call a change took over its budget: ``cuda_bench.results.budgets``) and
nothing else, so that a pull-request check, a job scheduler or a script tells a failure to measure,
a failure to start and an interruption from a slower build. Standard library only: the bottom stage,
which every module may import.
"""

from __future__ import annotations

OK, REGRESSION, INCOMPLETE, ERROR, INTERRUPTED = 0, 1, 2, 3, 130

#: each status in one line, as ``cuda-bench --help`` lists them
MEANINGS = {
    OK: "done, nothing regressed",
    REGRESSION: "a regression, or a call the change took over its budget (and nothing else)",
    INCOMPLETE: "something could not be measured or read",
    ERROR: "could not start, or stopped on an error",
    INTERRUPTED: "interrupted (Ctrl-C or SIGTERM)",
}


def worst(statuses):
    """One exit status for several: REGRESSION where any is, else the highest (INTERRUPTED over
    ERROR over INCOMPLETE over OK)."""
    statuses = list(statuses)
    return REGRESSION if REGRESSION in statuses else max(statuses, default=OK)


def described():
    """Every status with its meaning, in one line: ``0 done, nothing regressed; 1 a
    regression``..."""
    return "; ".join(f"{code} {meaning}" for code, meaning in MEANINGS.items())
