"""What the project adds to asv itself, so that ``asv run``, ``asv continuous`` and ``asv publish``
typed as they are behave as the project needs. asv imports this module because ``asv.conf.json``
names it in ``plugins``.

* **Set once**: ``cuda-bench init`` writes ``.asv/local.json`` (this checkout's cuda-python clone
  and asv machine name); every asv command reads it, so ``asv run HEAD~20..HEAD`` needs neither
  ``--machine`` nor a reachable GitHub.
* **No GPU, no history**: on a machine without a GPU, asv's results go to ``results-no-gpu`` beside
  asv's environments (``.asv/results-no-gpu``), never into ``results/``, the history of real GPU
  runs. ``asv publish`` still publishes ``results/``.
* **Nothing measured is lost**: a case that a results file holds a measured value of, and that a
  later run skipped or failed under the same benchmark version, keeps its value; the command names
  each such case and exits 2.
* **No verdict on nothing**: ``asv compare`` stops with exit status 2, before asv's "not
  significantly changed", when no case was measured on both commits.
* **The pull-request command decides by the paired engine**: ``asv continuous BASE HEAD`` times both
  builds in turn, process pair by process pair (``cuda_bench.compare.gate.gate``, what ``cuda-bench
  compare`` runs), prints the paired comment and exits with its status (1: a regression beyond its
  interval and threshold, or a call the change took over its budget:
  ``cuda_bench.results.budgets``). asv's own comparison of one unpaired run per commit flags noise
  on a machine whose speed moves; with ``CUDA_BENCH_ASV_UNPAIRED=1`` it runs as asv has it.
* **Publish from results/ alone**: ``asv publish`` reads commit order, dates and release tags from
  ``results/commits.json`` (:class:`ResultsRepo`), never from a clone or the network, each tag's
  name escaped for asv's graphs, which write it into the page as HTML; it draws one line per case
  across the whole history, whatever cuda-bindings environment measured each commit; and it adds the
  project's pages, fed by the paired steps (``cuda_bench.publish.dashboard.finish``), so that plain
  ``asv publish`` shows what ``cuda-bench publish`` shows.
* **An interrupt is one line**: Ctrl-C (or the SIGINT a ``cuda-bench`` command sends the asv it
  runs) ends the command with exit status 130 and one line, never asv's traceback or its
  "Interrupted."; under ``cuda-bench``, none: the command says it.

asv 0.6.6 (pinned in pyproject.toml) calls a command as ``Command.run_from_conf_args(conf, args)``
after it imports the plugins, so wrapping that classmethod reaches the command that is about to run.
"""

from __future__ import annotations

import html
import os
import sys
import time
from pathlib import Path

from cuda_bench.build import toolkit
from cuda_bench.foundations import machine, suite
from cuda_bench.foundations.paths import (
    ASV_DRIVEN,
    ASV_PAGES_ONLY,
    BENCHMARKS,
    machine_dirs,
    no_gpu_results,
)
from cuda_bench.foundations.status import INTERRUPTED
from cuda_bench.publish.asv_kept import measured, restore_measured, snapshot
from cuda_bench.results import asv_files
from cuda_bench.run import asvrun

# asv commands that write results: on a machine without a GPU they write outside the history
WRITERS = ("Run", "Continuous", "Find", "Profile")
# asv commands that read the history as it is: publish and preview show results/ on any machine
SHOW_HISTORY = ("Publish", "Preview")
RESULTS_REPO = (
    "cuda-bench-results"  # asv's dvcs for the history as results/ records it (ResultsRepo)
)


def say(message):
    print(f"cuda-bench: {message}", file=sys.stderr, flush=True)


def apply_settings(name, conf, args, settings=None, gpu=None):
    """Adjust asv's ``conf`` and ``args`` for command ``name`` (a Command class name) before it
    runs."""
    settings = asvrun.local_settings() if settings is None else settings
    if settings.get("repo") and conf.repo == asvrun.load_conf().get(
        "repo"
    ):  # a repository asked for stays
        conf.repo = settings["repo"]
    if hasattr(args, "machine") and not args.machine and settings.get("machine"):
        args.machine = settings["machine"]
    if name in SHOW_HISTORY:
        conf.dvcs = RESULTS_REPO  # commits, dates and tags from results/: no clone, no network
        history_repo().results_dir = conf.results_dir
        return
    gpu = machine.gpu_info() if gpu is None else gpu
    elsewhere = no_gpu_results(conf.env_dir)
    if not gpu and Path(conf.results_dir).resolve() != elsewhere:
        # under a cuda-bench command, which said it first
        if name in WRITERS and not os.environ.get(ASV_DRIVEN):
            from cuda_bench.compare import gate

            paired = name == "Continuous" and not os.environ.get(UNPAIRED)
            say(
                suite.without_gpu(
                    gate.WITHOUT_GPU
                    if paired
                    else f"results go to {elsewhere}, not {conf.results_dir} (the history of GPU "
                    "runs)",
                    getattr(conf, "benchmark_dir", None) or BENCHMARKS,
                )
            )
        conf.results_dir = str(elsewhere)


# --- the history as results/ records it -------------------------------------------------------
class FromResults:
    """cuda-python's history as ``results/`` records it: each measured commit's date, release
    tags and place on main's first-parent history (``asv_files.commits``:
    ``results/commits.json``, or the results file's date for a commit it lacks). asv publish
    needs nothing else from a repository; building needs a clone."""

    dvcs = RESULTS_REPO
    _default_branch = "main"
    results_dir = None

    def __init__(self, url, mirror_path):
        from asv import util

        if self.results_dir is None:
            raise util.UserError("the results-only history needs a results directory")
        self._known = asv_files.commits(self.results_dir)
        self._order = sorted(
            self._known,
            key=lambda c: (self._known[c]["date"], self._known[c]["position"] or 0, c),
        )
        self._main = [
            c
            for c in self._order
            if self._known[c]["position"] is not None or not self._known[c]["recorded"]
        ]

    @classmethod
    def url_match(cls, url):
        return False

    def pull(self):
        pass

    def checkout(self, path, commit_hash):
        from asv import util

        raise util.UserError(
            "results/ records the history, not the code: building needs a clone (--repo)"
        )

    def get_date(self, hash):
        return self._known[self.get_hash_from_name(hash)]["date"]

    def get_date_from_name(self, name):
        return self.get_date(name)

    def _tags(self):
        return {tag: sha for sha in self._order for tag in self._known[sha]["tags"]}

    def get_tags(self):
        """{tag: commit}, for asv publish's ``index.json``: asv's graphs write each tag's name
        into the page as HTML, so each is given escaped and reads there as it was written."""
        return {html.escape(tag): sha for tag, sha in self._tags().items()}

    def get_revisions(self, commits):
        return {sha: i for i, sha in enumerate(self._order) if sha in commits}

    def get_hash_from_name(self, name):
        from asv.repo import NoSuchNameError

        name = name or self._default_branch
        name = name.removesuffix("^{commit}")
        if name == self._default_branch:
            if not self._main:
                raise NoSuchNameError(name)
            return self._main[-1]
        tags = self._tags()
        if name in tags:
            return tags[name]
        found = [sha for sha in self._order if sha.startswith(name)]
        if len(found) != 1:
            raise NoSuchNameError(name)
        return found[0]

    def get_hash_from_parent(self, name):
        from asv.repo import NoSuchNameError

        sha = self.get_hash_from_name(name)
        if sha not in self._main or self._main.index(sha) == 0:
            raise NoSuchNameError(f"{name}^")
        return self._main[self._main.index(sha) - 1]

    def get_name_from_hash(self, commit):
        return asv_files.release_name(self._known.get(commit) or {})

    def get_range_spec(self, commit_a, commit_b):
        return f"{commit_a}..{commit_b}"

    def get_new_range_spec(self, latest_result, branch=None):
        return f"{latest_result}..{self.get_branch_name(branch)}"

    def get_hashes_from_range(self, range_spec):
        """Newest first, as ``git rev-list --first-parent`` lists them: main's measured commits
        after A up to B for ``A..B``; B and the main commits before it for ``B``."""
        start, dots, end = (range_spec or self._default_branch).partition("..")
        if not dots:
            start, end = None, start
        end = self.get_hash_from_name(end or self._default_branch)
        line = self._main if end in self._main else [*self._main, end]
        upto = line[: line.index(end) + 1]
        if start:
            first = self.get_hash_from_name(start)
            upto = [sha for sha in upto if self._order.index(sha) > self._order.index(first)]
        return upto[::-1]

    def get_branch_commits(self, branch):
        return self._main[::-1]


def history_repo():
    """:class:`ResultsRepo`, made once asv can be imported (asv finds a dvcs among ``Repo``'s
    subclasses): asv's ``Repo`` with :class:`FromResults`' history."""
    global ResultsRepo
    if ResultsRepo is not None:
        return ResultsRepo
    from asv.repo import Repo

    class _ResultsRepo(FromResults, Repo):
        pass

    ResultsRepo = _ResultsRepo
    return ResultsRepo


ResultsRepo = None


#: {results folder: its results, as asv's reader made them}: asv publish and its Regressions view
#: walk the results several times, and read each file once
READ = {}


def one_line_per_case(iter_results):
    """asv publish's reader of results files, machine folder by machine folder
    (``results/commits.json`` and ``benchmarks.json`` beside them are no results): one build per
    commit, the one the project's pages show (``asv_files.shown_first``), so that no point of asv's
    graphs is the mean of two builds' medians; without their environment variables, so that a
    commit measured with one cuda-bindings (the releases, ``auto``) and the next with another
    (main, built from each commit) stay on one line of one graph, instead of two graphs that stop
    where the environment changes; neither a commit ``commits.json`` lacks nor a median no
    measurement can be (:func:`impossible_as_failed`), which the project's pages name instead. asv
    publish walks the results several times: each file is read once."""

    def rank(found):
        bindings = (found.env_vars or {}).get(asv_files.BINDINGS, "")
        return asv_files.shown_first(bindings, max(found.started_at.values(), default=0))

    def one_build_each(results_dir):
        if results_dir not in READ:
            READ[results_dir] = []
            listed = asv_files.listed(results_dir)  # a commit it lacks: on no page (load_all)
            for folder in machine_dirs(results_dir):
                best = {}
                for found in iter_results(str(folder)):
                    if listed is not None and found.commit_hash not in listed:
                        continue
                    kept = best.get(found.commit_hash)
                    if kept is None or rank(found) >= rank(kept):
                        best[found.commit_hash] = found
                for found in best.values():
                    found._env_vars = {}
                    impossible_as_failed(found)
                    READ[results_dir].append(found)
        yield from READ[results_dir]

    return one_build_each


def impossible_as_failed(found):
    """A median no measurement can be (``asv_files.possible``: the pages name it unreadable) drawn
    as asv draws a failed case: no point."""
    for key, medians in found._results.items():
        if not isinstance(medians, list):  # the whole benchmark failed: nothing drawn already
            continue
        stats = found._stats.get(key) or []
        quartiles = [(s or {}).get("q_25") for s in stats] + [None] * (len(medians) - len(stats))
        found._results[key] = [
            m if asv_files.possible(m, q) else None for m, q in zip(medians, quartiles)
        ]


def no_step_detection(graph_class):
    """asv publish runs its step detection on every graph's medians, for its Regressions view and
    its list's change column; here both show the paired steps' flags instead
    (``pages.asv_site``), so the detection's result is never shown: each graph gets no steps, and a
    history of a thousand commits publishes in a third of the time."""

    def detect_steps(self, pool=None):
        self._steps = [[] for _ in range(self.n_series)]

    graph_class.detect_steps = detect_steps


# --- asv continuous, decided by the paired engine ---------------------------------------------
UNPAIRED = "CUDA_BENCH_ASV_UNPAIRED"


def paired_continuous(conf, args):
    """``asv continuous [BASE] HEAD [-b REGEX ...]``: the two commits through the paired engine, as
    ``cuda-bench compare`` measures them (each case's ratio with its 95 % interval; a regression
    only beyond its threshold, calibrated on this machine), the comment printed; its exit status."""
    from cuda_bench.compare import gate, paired
    from cuda_bench.foundations.paths import RESULTS, label
    from cuda_bench.foundations.status import INCOMPLETE, OK, REGRESSION, worst
    from cuda_bench.results import budgets, records

    head = args.branch or "main"
    base = args.base or f"{head}^"
    derived = {
        "repo": conf.repo,
        "project": conf.project,
        "matrix": conf.matrix,
    }  # what asv would have built
    repo = asvrun.local_repo(derived)
    name, info = machine.record(
        getattr(args, "machine", None) or asvrun.local_settings().get("machine")
    )
    thresholds = records.calibration(RESULTS / name)
    out = (
        Path(conf.env_dir).parent / "continuous" / f"{label(base)}-{label(head)}"
    )  # beside asv's environments
    say(
        f"asv continuous {base} {head}: decided by the paired engine ({paired.Settings().pairs} "
        "process pairs, "
        f"both builds timed in turn on one core; {len(thresholds) or 'no'} thresholds calibrated "
        f"on {name}); "
        f"asv's unpaired comparison: {UNPAIRED}=1"
    )
    try:
        data, text, _ = gate.gate(
            repo,
            base,
            head,
            conf=derived,
            kind="pr",
            settings=paired.Settings(),
            bench=list(getattr(args, "bench", None) or []),
            thresholds=thresholds,
            out=out,
            command=f"asv continuous {base} {head}",
            info=info,
            progress=say,
            # over-C++ runs, which the budgets are judged from, need a GPU: none without one
            over_cpp_dir=RESULTS / name if machine.has_gpu(info) else None,
        )
    except (toolkit.BuildError, gate.CompareError, paired.WorkerError, OSError) as exc:
        say(f"asv continuous {base} {head}: not measured: {exc}")
        return INCOMPLETE
    print(text, flush=True)
    status = gate.exit_status(data)
    over = budgets.taken_over((data.get("budgets") or {}).get("judged", []))
    say(
        f"{out}/summary.md: "
        + {
            OK: "no regression",
            REGRESSION: "PERFORMANCE DECREASED (paired)"
            + (f"; {len(over)} call(s) taken over budget" if over else ""),
            INCOMPLETE: "something could not be measured",
        }[status]
    )
    # a budgets file or record that could not be read: named, and the status says it (as cli's)
    return worst([status, INCOMPLETE]) if asv_files.say_unreadable("cuda-bench") else status


# --- the wrapper ------------------------------------------------------------------------------
def wrap(cls):
    original = cls.__dict__["run_from_conf_args"].__func__
    if cls.__name__ == "Continuous":
        asv_own = original

        def original(klass, conf, args):
            return (
                asv_own(klass, conf, args)
                if os.environ.get(UNPAIRED)
                else paired_continuous(conf, args)
            )

    def run_from_conf_args(klass, conf, args):
        from asv import util

        apply_settings(klass.__name__, conf, args)
        before = snapshot(conf.results_dir) if klass.__name__ in WRITERS else {}
        started, status = time.time(), 0
        try:
            status = original(klass, conf, args)
            if klass.__name__ == "Publish" and not status and not os.environ.get(ASV_PAGES_ONLY):
                from cuda_bench.publish import dashboard

                dashboard.finish(conf, conf.results_dir, conf.html_dir)
        except KeyboardInterrupt:  # in a build or an install: asv would print its traceback
            status = interrupted()
        except util.UserError as exc:
            if str(exc) != "Interrupted.":  # what asv says when it stops discovering or timing
                raise
            status = interrupted()
        except (
            SystemExit
        ) as stop:  # asv continuous on nothing measured, sys.exit(0) in asv: values still go back
            if stop.code is None or isinstance(stop.code, int):
                status = stop.code or 0
            else:  # sys.exit("message"): the message, exit status 1, as Python gives it
                say(str(stop.code))
                status = 1
        # also when the command stops on an error or an interrupt, after some results were written
        finally:
            # asv's line on a failed build is long, its reason at the end; an interrupt is one line
            if klass.__name__ in WRITERS and status != INTERRUPTED:
                for line in asvrun.stopped_builds(conf.env_dir, started, conf.install_timeout):
                    say(line)
            lost = restore_measured(conf.results_dir, before) if before else []
            for path, case in lost:
                say(
                    f"{case} at {path.name[:8]}: measured before, skipped or failed now; the "
                    "measured value is kept"
                )
            if lost:
                say(
                    f"{len(lost)} measured case(s) this run did not measure again (above); results "
                    "are as they were"
                )
        return (status or 2) if lost else status

    cls.run_from_conf_args = classmethod(run_from_conf_args)


def interrupted():
    """An interrupt's exit status, said in one line; under a ``cuda-bench`` command, which says it,
    in none."""
    if not os.environ.get(ASV_DRIVEN):
        say("interrupted")
    return INTERRUPTED


def no_verdict_on_nothing(compare):
    """``Compare.print_table`` (``asv compare``, and ``asv continuous`` after its runs) that stops
    with exit status 2 when no case has a measured value on both sides."""
    original = compare.__dict__["print_table"].__func__

    def print_table(
        klass, conf, hash_1, hash_2, factor, split, resultset_1=None, resultset_2=None, **kwargs
    ):
        machine_name, env_names = kwargs.get("machine"), kwargs.get("env_names")
        resultset_1 = list(
            _results_of(conf, hash_1, machine_name, env_names)
            if resultset_1 is None
            else resultset_1
        )
        resultset_2 = list(
            _results_of(conf, hash_2, machine_name, env_names)
            if resultset_2 is None
            else resultset_2
        )
        first = {(r[0], r[6], r[7]): r[2] for r in resultset_1}
        both = [
            r
            for r in resultset_2
            if _any_measured(first.get((r[0], r[6], r[7]))) and _any_measured(r[2])
        ]
        if not both:
            say(
                f"no case has a measured value at both {hash_1[:9]} and {hash_2[:9]} (every one "
                "skipped or failed, "
                "or not run): nothing to compare"
            )
            raise SystemExit(2)
        return original(
            klass,
            conf,
            hash_1,
            hash_2,
            factor,
            split,
            resultset_1=resultset_1,
            resultset_2=resultset_2,
            **kwargs,
        )

    compare.print_table = classmethod(print_table)


def _results_of(conf, commit_hash, machine_name, env_names):
    """The rows ``asv compare`` reads of one commit when it is given none, as asv 0.6.6 reads
    them."""
    from asv.results import iter_results_for_machine_and_hash

    rows = []
    for result in iter_results_for_machine_and_hash(conf.results_dir, machine_name, commit_hash):
        if env_names is not None and result.env_name not in env_names:
            continue
        for key in result.get_all_result_keys():
            params = result.get_result_params(key)
            rows.append(
                (
                    key,
                    params,
                    result.get_result_value(key, params),
                    result.get_result_stats(key, params),
                    result.get_result_samples(key, params),
                    result.benchmark_version.get(key),
                    result.params["machine"],
                    result.env_name,
                )
            )
    return rows


def _any_measured(value):
    return any(map(measured, value)) if isinstance(value, list) else measured(value)


def setup():
    """Called by asv's plugin manager when it imports this module."""
    from asv import graph, util
    from asv.commands import Command
    from asv.commands import publish as asv_publish
    from asv.commands.compare import Compare
    from asv.plugins import regressions as asv_regressions

    history_repo()
    if not getattr(graph.Graph, "_cuda_bench", False):
        no_step_detection(graph.Graph)
        graph.Graph._cuda_bench = True
    for module in (asv_publish, asv_regressions):
        if not getattr(module.iter_results, "_cuda_bench", False):
            module.iter_results = one_line_per_case(module.iter_results)
            module.iter_results._cuda_bench = True

    for cls in util.iter_subclasses(Command):
        if "run_from_conf_args" in cls.__dict__ and not cls.__dict__.get("_cuda_bench"):
            wrap(cls)
            cls._cuda_bench = True
    if not Compare.__dict__.get("_cuda_bench_print_table"):
        no_verdict_on_nothing(Compare)
        Compare._cuda_bench_print_table = True
