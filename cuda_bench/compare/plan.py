"""Stage 4, compare: what one machine's history lacks, ordered by what it is worth, each part with
the GPU time it is expected to take; and as much of it as fits in a budget, run (``cuda-bench
plan``).

What a GPU machine can add, most valuable first:

1. **main's head**: measured in one pass (``cuda-bench window``) with the measured commits before it
   and any not yet measured between them, each paired with the one before it, counted;
2. **gaps**: measured commits of main with no paired step between them, newest first (the chains
   restart there);
3. **main's window**: its newest commits not yet measured, newest first, in passes of up to a
   block's builds (``window.BLOCK``), each pass with the measured commits around it;
4. **counts**: measured commits of main whose work per call was never counted;
5. **releases**: the step from the newest release to main's head, then release tags not yet measured
   (newest first), then gaps between measured releases, each release built against the cuda-bindings
   it supports; then each release step across a cuda-bindings wheel change again, with one
   cuda-bindings on both sides where both releases support it (``history.twin``).

A step between identical builds (``trees.identity``) costs nothing: it is recorded without
measuring. Every estimate is made of parts (a window's pass, asv's run, the paired steps, the
counting pass, the builds the wheel cache lacks), each from this machine's own records where it has
some (seconds per case, times the suite's cases today), else from :data:`DEFAULTS`; the record of a
run (:func:`execute`) keeps each item's estimate beside the time it took. A GPU machine without
network takes the wheels a part needs in batches that fit what one call carries (:func:`batches`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cuda_bench.build import toolkit, trees
from cuda_bench.compare import onepass, summaries, window
from cuda_bench.compare.costs import (  # noqa: F401 (the plan's costs)
    COLD_STARTS,
    DEFAULTS,
    OVERHEAD,
    Costs,
    costs,
)
from cuda_bench.foundations import process
from cuda_bench.foundations.names import is_release_tag
from cuda_bench.foundations.paths import result_files
from cuda_bench.foundations.text import times
from cuda_bench.results import asv_files, history
from cuda_bench.run import asvrun

KINDS = ("head", "gap", "window", "counts", "release")
#: seconds every item of a plan run within a call's time limit ends inside it
MARGIN = 30.0


@dataclass
class Item:
    kind: str  # one of KINDS
    what: str  # one line, for people
    # the cuda-bench command that does it (without the options every command of the plan shares)
    args: list
    parts: dict = field(default_factory=dict)  # {part: estimated seconds}
    commits: list = field(default_factory=list)  # the commits it measures or pairs
    #: the commits whose environments it makes (a window's measured neighbours too; default
    #: ``commits``), and the cuda-bindings they are made with (default the plan's)
    needs: list = field(default_factory=list)
    bindings: str | None = None

    @property
    def seconds(self):
        return round(sum(self.parts.values()), 1)


def builds_needed(repo, commit, bindings, cache=None, python=None):
    """[(package, cache key)] of ``commit``'s packages whose wheels the cache lacks for ``bindings``
    and the ``python`` the machine runs (what its environment would build: ``trees.cache_keys``)."""
    cache = Path(cache or toolkit.cache_root())
    return [
        (package, key)
        for package, key in trees.cache_keys(repo, commit, bindings, python)
        if not any((cache / package / key).glob("*.whl"))
    ]


def machine_python(folder):
    """The Python version ("3.12") of the asv results file in ``folder`` the machine wrote last
    (its cases' newest start, not its commit's date), or None (none yet: this interpreter's)."""
    newest, when = None, -1
    for path in result_files(folder):
        data = asv_files.load(path)
        started = asv_files.measured_at(data) if data is not None else None
        if started is not None and started > when:
            newest, when = data, started
    return (newest or {}).get("params", {}).get("python") or None


class Planner:
    """The plan of one machine (``results_dir/machine_name``) for the clone ``repo``: main's
    ``window`` newest commits in the environment of ``bindings`` (asv.conf.json's matrix), the
    releases in ``auto``'s."""

    def __init__(
        self,
        repo,
        results_dir,
        machine_name,
        conf,
        window=20,
        branch="main",
        cost=None,
        cache=None,
        counts=True,
    ):
        self.repo, self.results_dir, self.machine_name = Path(repo), Path(results_dir), machine_name
        self.conf, self.window, self.branch, self.cache = conf, window, branch, cache
        self.bindings = asvrun.bindings_of(conf)
        self.cost = cost or costs(results_dir, machine_name)
        # the Python the machine runs, as its newest asv results say: the wheel cache's keys
        self.python = machine_python(self.results_dir / machine_name)
        self.built = set()  # (package, cache key) whose build an earlier item of the plan pays for
        self.fit = None  # seconds a window's pass must fit in (a call's time limit), or None
        self.counts = counts  # whether the plan counts the work per call (--no-counts: not)

    def _env(self, bindings):
        env = {key: values[0] for key, values in self.conf.get("matrix", {}).get("env", {}).items()}
        return env | {"CUDA_BENCH_BINDINGS": bindings}

    def measured(self, bindings):
        """The commits this machine measured with ``bindings`` (and the same system site)."""
        wanted = self._env(bindings)
        found = set()
        for path in result_files(self.results_dir / self.machine_name):
            data = asv_files.load(path)
            if data is not None and (data.get("env_vars") or {}) == wanted:
                found.add(data["commit_hash"])
        return found

    def _builds(self, commits, bindings):
        parts = 0.0
        for commit in commits:
            for package, key in builds_needed(self.repo, commit, bindings, self.cache, self.python):
                # built once, for whichever item needs it first
                if (package, key) not in self.built:
                    self.built.add((package, key))
                    parts += self.cost.build(package)
        return round(parts, 1)

    def _step(self, base, head, bindings):
        """(seconds, whether identical) of a paired step."""
        if summaries.identical(summaries.built_from(self.repo, base, head, bindings)):
            return 0.0, True
        return self.cost.part("step"), False

    def _parts(self, measure=(), steps=(), counts=(), bindings=None):
        bindings = bindings or self.bindings
        parts = {}
        if measure:
            parts["asv"] = round((self.cost.part("asv") + OVERHEAD["asv"]) * len(measure), 1)
        paired = [self._step(b, h, bindings) for b, h in steps]
        if any(not same for _, same in paired):
            parts["steps"] = round(sum(s + OVERHEAD["steps"] for s, same in paired if not same), 1)
        if counts:
            parts["counts"] = round(self.cost.part("counts") * len(counts), 1)
        builds = self._builds(
            list(dict.fromkeys([*measure, *(c for s in steps for c in s)])), bindings
        )
        if builds:
            parts["builds"] = builds
        return parts

    def main_line(self):
        """main's newest ``window`` commits, newest first (its first-parent history)."""
        proc = subprocess.run(
            [
                "git",
                "-C",
                str(self.repo),
                "rev-list",
                "--first-parent",
                f"-{self.window}",
                trees.resolve(self.repo, self.branch),
                "--",
            ],
            capture_output=True,
            text=True,
        )
        return proc.stdout.split()

    def neighbours(self, commit, line, measured):
        """The measured commits of ``line`` (newest first) just before and just after ``commit``."""
        at = line.index(commit)
        before = next((c for c in line[at + 1 :] if c in measured), None)
        after = next((c for c in reversed(line[:at]) if c in measured), None)
        return before, after

    def items(self):
        """The plan, most valuable first (:data:`KINDS`)."""
        self.built = set()
        line = self.main_line()
        if not line:
            return []
        head = line[0]
        measured = self.measured(self.bindings)
        counted = set(history.work(self.results_dir, self.machine_name))
        out = []
        segments = self.segments(line, measured)
        if segments and segments[0][-1] == head:
            first = segments.pop(0)
            out.append(self._window_item("head", first, line, measured, "main's head"))
        for base, head_ in self.gaps(self.bindings):
            out.append(
                Item(
                    "gap",
                    f"the step {base[:9]} -> {head_[:9]} of main",
                    ["steps", "--pair", base, head_],
                    self._parts(steps=[(base, head_)]),
                    [base, head_],
                )
            )
        for segment in segments:
            out.append(self._window_item("window", segment, line, measured, "main's"))
        for commit in line if self.counts else ():
            if commit in measured and commit not in counted:
                out.append(
                    Item(
                        "counts",
                        f"the work per call at {commit[:9]} counted",
                        ["counts", commit],
                        self._parts(counts=[commit]),
                        [commit],
                    )
                )
        out += self.releases(head)
        return out

    def segments(self, line, measured):
        """main's commits not yet measured, in runs for one pass each, newest run first: each run
        consecutive on ``line`` (newest first), oldest first, at most a block's builds but one (the
        measured commit before it takes the last place)."""
        out, run = [], []
        for commit in line + [None]:
            if commit is not None and commit not in measured and len(run) < window.BLOCK - 1:
                run.append(commit)
                continue
            if run:
                out.append(run[::-1])
            run = [commit] if commit is not None and commit not in measured else []
        return out

    def _window_item(self, kind, segment, line, measured, what, args=None, bindings=None):
        """A pass of ``cuda-bench window`` (or of ``args(segment)``) over ``segment`` (oldest first)
        and the measured commits of ``line`` (newest first) around it, in ``bindings``' environment.
        Where the plan must fit ``self.fit`` seconds (what is left of a call's time limit), the
        newest commits of ``segment`` whose pass fits, at least one: a later pass measures the
        others and pairs them with these."""
        built = set(self.built)
        for keep in range(len(segment), 0, -1):
            self.built = set(built)
            part = segment[len(segment) - keep :]
            item = self._window_pass(
                kind, part, line, measured, what, args(part) if args else None, bindings
            )
            if self.fit is None or item.seconds <= self.fit:
                return item
        return item

    def _window_pass(self, kind, segment, line, measured, what, args, bindings):
        bindings = bindings or self.bindings
        commits = onepass.with_edges(segment, line[::-1], measured)
        runs = onepass.runs_of_builds(self.repo, commits, bindings)
        parts = {}
        if len(runs) > 1:
            parts["window"] = round(self.cost.window(len(runs)) + OVERHEAD["window"], 1)
        if self.counts:
            parts["counts"] = round(self.cost.part("counts") * len(segment), 1)
        builds = self._builds(commits, bindings)
        if builds:
            parts["builds"] = builds
        named = f"{segment[0][:9]}" if len(segment) == 1 else f"{segment[0][:9]}..{segment[-1][:9]}"
        paired_with = [c[:9] for c in commits if c not in segment]
        return Item(
            kind,
            f"{what} {named} ({len(segment)} commit{'s' if len(segment) > 1 else ''}) measured in "
            "one pass"
            + (f" with {' and '.join(paired_with)}" if paired_with else "")
            + f", {len(runs)} builds",
            args or ["window", *segment],
            parts,
            list(segment),
            commits,
            bindings if bindings != self.bindings else None,
        )

    def gaps(self, bindings):
        """The history's missing steps in ``bindings``' environment, newest head first."""
        pairs = history.missing_steps(self.results_dir, self.machine_name).get(bindings, [])
        return list(reversed(pairs))

    def releases(self, head):
        """The releases' part of the plan, in ``auto``'s environment."""
        try:
            ladder = asvrun.release_ladder(self.repo, self.branch)
        except asvrun.RunError:
            return []
        tags = [(tag, sha) for tag, sha in ladder if is_release_tag(tag)]
        if not tags:
            return []
        measured = self.measured("auto")
        out = []
        newest = tags[-1]
        line = [sha for _, sha in ladder][::-1]  # newest first, main's head last in the ladder
        if newest[1] in measured and head not in measured:
            out.append(
                self._window_item(
                    "release",
                    [head],
                    line,
                    measured,
                    f"main's head against the newest release, {newest[0]}:",
                    lambda part: ["ladder", "--tags", f"^{re.escape(self.branch)}$"],
                    "auto",
                )
            )
        named = {sha: tag for tag, sha in tags}
        for segment in self.segments([sha for _, sha in reversed(tags)], measured):
            names = [named[sha] for sha in segment]
            out.append(
                self._window_item(
                    "release",
                    segment,
                    line,
                    measured,
                    f"release{'s' if len(names) > 1 else ''} "
                    + (names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}")
                    + ", each paired with the release before it:",
                    lambda part: ["ladder", "--tags", tags_of([named[sha] for sha in part])],
                    "auto",
                )
            )
        for base, head_ in self.gaps("auto"):
            out.append(
                Item(
                    "release",
                    f"the release step {base[:9]} -> {head_[:9]}",
                    ["steps", "--bindings", "auto", "--pair", base, head_],
                    self._parts(steps=[(base, head_)], bindings="auto"),
                    [base, head_],
                    bindings="auto",
                )
            )
        out += self.one_bindings({sha for _, sha in tags})
        return out

    def one_bindings(self, released):
        """Each release step of the history across a cuda-bindings wheel change without a
        ``history.twin``: the same two releases measured and paired with the older side's
        cuda-bindings on both, where both declare it (``trees.supports``), so that the release's own
        change stands apart from the wheel's."""
        out = []
        found = history.steps(self.results_dir, self.machine_name)
        for step in found:
            change = history.environment_change(step).get("cuda-bindings")
            if (
                not change
                or history.twin(step, found)
                or step["base"] not in released
                or step["head"] not in released
            ):
                continue
            version = change[0]
            if not all(trees.supports(self.repo, c, version) for c in (step["base"], step["head"])):
                continue
            pair = [step["base"], step["head"]]
            out.append(
                Item(
                    "release",
                    f"the release step {pair[0][:9]} -> {pair[1][:9]} with cuda-bindings "
                    f"{version} on both sides (apart from its {change[0]} -> {change[1]} change)",
                    ["run", f"{pair[0]}^!", f"{pair[1]}^!", "--bindings", version],
                    self._parts(pair, [tuple(pair)], pair, bindings=version),
                    pair,
                    bindings=version,
                )
            )
        return out


def tags_of(names):
    """The ``--tags`` regex of the release tags ``names``."""
    return "^(" + "|".join(re.escape(n) for n in names) + ")$"


def table(items, cost=None):
    """The plan as lines: each item with its estimate and its parts, then the total."""
    lines = []
    total = 0.0
    for i, item in enumerate(items, 1):
        total += item.seconds
        parts = ", ".join(f"{k} {v:.0f} s" for k, v in item.parts.items()) or "nothing to measure"
        lines.append(
            f"{i:3d}. [{item.kind}] {item.what}: about {item.seconds / 60:.1f} min ({parts}); "
            f"cuda-bench {' '.join(item.args)}"
        )
    lines.append(f"     in all about {total / 60:.1f} min of GPU machine time")
    if cost is not None:
        lines.append(
            "     estimates per case of the suite's "
            + f"{cost.cases} cases: "
            + ", ".join(f"{k} {v:.2f} s ({cost.sources[k]})" for k, v in cost.per_case.items())
        )
    return lines


def execute(
    planner,
    budget,
    run_one,
    progress=print,
    limit=100,
    clock=time.monotonic,
    call_limit=None,
    spent=0.0,
):
    """Run the plan's items in order while the next one fits in what is left of ``budget`` seconds
    (never passing over a more valuable item for a smaller one), planning again after each, since
    one item can fill another's gap. ``run_one(item)`` runs an item's command and returns its exit
    status. Where the items run so far took longer than estimated, the next one's estimate is
    scaled by that (never down: one fast part says little of the next). With ``call_limit`` (the
    seconds one call of a GPU machine may run, ``spent`` of them gone before this started) every
    item ends :data:`MARGIN` seconds inside it: a window's pass is cut to the newest commits that
    fit (``Planner.fit``). The record: each item with its estimate, the seconds it took and its
    status, what was left, and the item a next call starts with."""
    if call_limit:
        budget = min(budget, call_limit - MARGIN - spent)
    start = clock()
    done, tried = [], set()
    while len(done) < limit:
        left = budget - (clock() - start)
        scale = max(
            1.0, sum(d["seconds"] for d in done) / max(1.0, sum(d["estimate"] for d in done))
        )
        planner.fit = left / scale if call_limit else None
        todo = [i for i in planner.items() if tuple(i.args) not in tried]
        if not todo or todo[0].seconds * scale > left:
            break
        fits = todo[0]
        tried.add(tuple(fits.args))
        expect = f"about {fits.seconds * scale:.0f} s" + (
            f" ({times(scale, 2)} of the estimate, as the parts before took)" if scale > 1 else ""
        )
        progress(f"plan: [{fits.kind}] {fits.what}: {expect}, {left:.0f} s of the budget left")
        began = clock()
        status = run_one(fits)
        took = round(clock() - began, 1)
        done.append(
            {
                "kind": fits.kind,
                "what": fits.what,
                "args": fits.args,
                "estimate": fits.seconds,
                "parts": fits.parts,
                "seconds": took,
                "status": status,
            }
        )
        progress(
            f"plan: [{fits.kind}] took {took:.0f} s (estimated {fits.seconds:.0f} s), exit status "
            f"{status}"
        )
    planner.fit = call_limit - MARGIN if call_limit else None  # a whole call of its own
    left = [
        {"kind": i.kind, "what": i.what, "args": i.args, "estimate": i.seconds}
        for i in planner.items()
        if tuple(i.args) not in tried
    ]
    if left:
        progress(
            f"plan: next: [{left[0]['kind']}] {left[0]['what']}: about {left[0]['estimate']:.0f} s"
            + (" (a call of its own)" if call_limit else "")
        )
    return {
        "next": left[0] if left else None,
        "budget": budget,
        "seconds": round(clock() - start, 1),
        "done": done,
        "left": left,
        "costs": {
            "per_case": planner.cost.per_case,
            "sources": planner.cost.sources,
            "cases": planner.cost.cases,
            "cores": planner.cost.cores,
        },
    }


def write(path, record):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    process.write_whole(path, json.dumps(record, indent=1) + "\n")


def run_command(args, shared, log_path=None):
    """``cuda-bench ARGS SHARED`` in a process of its own (its console to ours); its exit status."""
    cmd = [sys.executable, "-m", "cuda_bench", *args[:1], *shared, *args[1:]]
    print("bench: $ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd).returncode
