"""Stage 5, publish: the read layer. :func:`load` reads ``results/`` once into a :class:`History`,
and every page (``cuda_bench.publish.pages``), the Markdown report and the nightly issue
(``cuda_bench.publish.report``) are drawn from it: none of them reads a file or decides a verdict.

Each file is read once, and everything else is derived from what was read. What it holds, per
machine: asv's results files, the paired steps (``history.merged_steps``: one per pair and
cuda-bindings), the counts and instruction records (``history.work_of``), the over-C++ records,
the pairs of measured commits the history has no step between (``history.missing_of``), and what
the front page, the Releases page and the Regressions page say of them (``summary.landing``,
``summary.releases``, ``summary.regressions``);
for the whole history, the commits (``results/commits.json``), asv's description of the suite, the
operation table (``overview.rows_of``) and every file or line that could not be read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cuda_bench.publish import overview, summary
from cuda_bench.results import asv_files, budgets, history, records


@dataclass(frozen=True)
class Machine:
    """One machine's history, as read."""

    name: str
    #: its asv results files that could be read, one build per commit
    #: (``asv_files.one_per_commit``), oldest commit first
    runs: list[dict]
    #: its paired steps, one per (base, head, cuda-bindings) (``history.steps``)
    steps: list[dict]
    #: {commit: counts record} (``history.work``)
    work: dict[str, dict]
    #: [(cuda-bindings, base, head)]: measured commits not yet paired with the one before
    #: (``history.missing_steps``)
    gaps: list[tuple[str, str, str]]
    #: what the front page says of it (``summary.landing``)
    landing: dict
    #: its release ladder and the newest release against main's head (``summary.releases``)
    releases: dict
    #: [(step, case, kind)]: every flag of its steps (``summary.regressions``)
    regressions: list[tuple[dict, dict, str]]
    #: [(step, case, kind)]: every slowdown put down to a cuda-bindings change
    #: (``summary.put_down_flags``)
    put_down: list[tuple[dict, dict, str]]
    #: its over-C++ records, oldest first
    over_cpp: list[dict]
    #: what its verdicts were judged against, in words (``summary.thresholds_words``)
    thresholds: str
    #: its bisects' answers, oldest first (``cuda-bench bisect``)
    bisects: list[dict]
    #: [(file, line, the commits it names)]: its step record lines that could not be read, with
    #: what could be read of them (``asv_files.touched``)
    damaged: list[tuple]
    #: each package tree it compiled, oldest first (``buildtime``: compiles.jsonl)
    compiles: list[dict] = field(default_factory=list)
    #: {commit: its instruction records, oldest first} (``history.work_of``)
    instructions: dict = field(default_factory=dict)

    @property
    def params(self):
        """asv's description of the machine (its newest results file's)."""
        return self.runs[-1]["params"] if self.runs else {}


#: the records each machine's folder holds, read once each (``records.FILES``)
KINDS = ("step", "counts", "over-cpp", "calibration", "bisect", "compile", "instructions")


@dataclass(frozen=True)
class History:
    """Everything ``results/`` holds that the pages and reports say, read once."""

    results_dir: Path
    #: {commit: title, date, tags, place on main} (``asv_files.commits``)
    known: dict[str, dict]
    #: asv's benchmarks.json: {benchmark: its params, param names, version}
    suite: dict[str, dict]
    #: [(machine, asv results file)] of every machine, one build per commit
    #: (``asv_files.one_per_commit``), each machine's newest commit last
    runs: list[tuple[str, dict]]
    #: every machine with results, in the order every page lists them (``overview.machine_order``)
    machines: dict[str, Machine]
    #: the operation table: one row per (machine, operation, case) at each machine's newest commit
    rows: list[dict]
    #: [(path, line, why)] of every file or line that could not be read (``asv_files.noted``)
    unreadable: list[tuple]
    #: the budgets every call is judged against (``budgets.read``: budgets.json5)
    budgets: budgets.Budgets | None = None

    @property
    def steps(self):
        """{machine: its paired steps}."""
        return {name: machine.steps for name, machine in self.machines.items()}

    @property
    def work(self):
        """{machine: {commit: counts record}}."""
        return {name: machine.work for name, machine in self.machines.items()}

    @property
    def instructions(self):
        """{machine: {commit: instruction records}}."""
        return {name: machine.instructions for name, machine in self.machines.items()}

    def noted(self):
        """What could not be read, as noted now: ``unreadable``, and what a command read after
        (``report --commit``)."""
        return noted(self.results_dir, self.budgets)

    def rows_at(self, prefix):
        """The operation table at the commits whose hash starts with ``prefix`` (``rows`` holds it
        at each machine's newest)."""
        runs = []  # each machine's runs up to that commit, oldest first: the chains that reach it
        for name, machine in self.machines.items():
            found = [d["commit_hash"].startswith(prefix) for d in machine.runs]
            if any(found):
                runs += [(name, d) for d in machine.runs[: found.index(True) + 1]]
        return overview.rows_of(
            self.suite,
            runs,
            self.steps,
            self.known,
            self.work,
            {name: machine.over_cpp for name, machine in self.machines.items()},
        )


def read_runs(results_dir, runs=None):
    """(asv's results files of ``results_dir``, the commits it holds: ``asv_files.commits``), with
    ``commits.json`` read once; ``runs``: the results files, where the caller has read them. Read
    afresh, what could not be read is noted afresh."""
    if runs is None:
        asv_files.forget(results_dir)
    listed = asv_files.listed(results_dir)
    if runs is None:
        runs = asv_files.load_all(results_dir, listed=listed)
    return runs, asv_files.commits(results_dir, runs, listed)


def load(results_dir, runs=None):
    """``results_dir`` read into a :class:`History`. What cannot be read is left out, named in
    ``unreadable`` (and noted afresh: ``asv_files.noted``): a file or record line that does not
    parse, a median no measurement can be (``asv_files.impossible``: its cell says "unreadable"), a
    results file of a commit ``commits.json`` lacks. ``runs``: its asv results files, where the
    caller has read them (``asv_files.load_all`` with ``commits.json`` as read, which noted what it
    could not read)."""
    results_dir = Path(results_dir)
    runs, known = read_runs(results_dir, runs)
    described = asv_files.suite(results_dir)
    every = {}
    for name, data in runs:
        every.setdefault(name, []).append(data)
    by_machine = {name: asv_files.one_per_commit(found) for name, found in every.items()}
    runs = [(name, data) for name, found in by_machine.items() for data in found]
    # each record file read once; everything below is derived from what was read
    kept = {name: {k: records.read(results_dir / name, k) for k in KINDS} for name in by_machine}
    steps = {name: history.merged_steps(kept[name]["step"]) for name in by_machine}
    work = {name: history.work_of(kept[name]["counts"]) for name in by_machine}
    machines = {}
    for name in overview.machine_order(by_machine):
        told = summary.landing(
            name,
            by_machine[name],
            steps[name],
            known,
            work[name],
            asv_files.unreadable_results(results_dir, name, known),
        )
        # every build: a commit measured with two cuda-bindings pairs with its neighbours in each
        neighbours = history.neighbours_of([(data, None) for data in every[name]])
        gaps = [
            (bindings, base, head)
            for bindings, pairs in history.missing_of(steps[name], neighbours).items()
            for base, head in pairs
        ]
        machines[name] = Machine(
            name=name,
            runs=by_machine[name],
            steps=steps[name],
            work=work[name],
            gaps=gaps,
            landing=told,
            releases=summary.releases(
                steps[name], known, (told["head"] or {}).get("commit"), work[name]
            ),
            regressions=summary.regressions(steps[name], known),
            put_down=summary.put_down_flags(steps[name], known),
            over_cpp=kept[name]["over-cpp"],
            thresholds=summary.thresholds_words(steps[name], kept[name]["calibration"]),
            bisects=kept[name]["bisect"],
            damaged=[
                (path, line, asv_files.touched(path, line))
                for path, line, _ in asv_files.noted(results_dir / name)
                if path.name == records.FILES["step"]
            ],
            compiles=kept[name]["compile"],
            instructions=history.work_of(kept[name]["instructions"]),
        )
    rows = overview.rows_of(
        described,
        runs,
        steps,
        known,
        work,
        {name: kept[name]["over-cpp"] for name in by_machine},
    )
    found = budgets.read()
    return History(
        results_dir=results_dir,
        known=known,
        suite=described,
        runs=runs,
        machines=machines,
        rows=rows,
        unreadable=noted(results_dir, found),
        budgets=found,
    )


def noted(results_dir, found_budgets):
    """[(path, line, why)] of what could not be read of ``results_dir`` and of the budgets file
    (``found_budgets``: ``budgets.read``'s): a command that could not read either exits 2, and its
    pages and Markdown say so on top."""
    return asv_files.noted(results_dir) + (
        asv_files.noted(found_budgets.path) if found_budgets is not None else []
    )
