"""``cuda-bench report``: the history as Markdown: the front page (``--markdown``, the default), each release
against the one before, the paired steps, the release ladder's medians across, how over-C++ runs agree, and the
nightly issue."""

from __future__ import annotations

from pathlib import Path

from cuda_bench import asvrun, history, overcpp, overview, report, results, summary
from cuda_bench.paths import RESULTS, machine_dirs
from cuda_bench.status import OK, REGRESSION


def add(sub):
    p = sub.add_parser("report", description="the history in results/ as Markdown: the dashboard's front page "
                       "(main's head, its paired verdicts, the open regressions, each operation), or what an option "
                       "names")
    p.add_argument("--results", type=Path, default=RESULTS, help="the results folder (default results/)")
    p.add_argument("--commit", help="each operation at this commit (a prefix) instead of the front page")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--markdown", action="store_true", help="the front page (the default): docs/results.md")
    what.add_argument("--releases", action="store_true", help="each cuda-core release against the one before it, "
                      "and the newest release against main's head")
    what.add_argument("--across", nargs="+", metavar="[LABEL=]COMMIT",
                      help="one column per commit (a release ladder) for one api")
    what.add_argument("--steps", action="store_true", help="the history's paired steps")
    what.add_argument("--issue", action="store_true", help="the nightly issue's body; exit 1 when a paired step of "
                      "main flagged a regression")
    what.add_argument("--agreement", action="store_true", help="how far the recorded over-C++ runs of a commit "
                      "(--commit, else the newest measured) agree, every pair")
    p.add_argument("--api", default="core", choices=overview.APIS, help="with --across: the library")
    p.add_argument("--output", type=Path, help="also write the text here")


def main(args, argv):
    runs = results.load_all(args.results)
    machines = sorted({m for m, _ in runs})
    steps = {m: history.steps(args.results, m) for m in machines}
    known = results.commits(args.results)
    status = OK
    if args.issue:
        text, count = report.issue_body(steps, known=known)
        status = REGRESSION if count else OK
    elif args.steps:
        text = "\n\n".join(report.steps_markdown(m, s) for m, s in steps.items() if s) or "No paired steps yet."
    elif args.across:
        text = report.across(runs, args.across, args.api)
    elif args.releases:
        heads = {m: summary.main_head([d["commit_hash"] for n, d in runs if n == m], known) for m in machines}
        text = "\n\n".join(report.releases_markdown(m, summary.releases(steps[m], known, heads[m],
                                                                           history.work(args.results, m)), known)
                           for m in machines) or "No results yet."
    elif args.agreement:
        found = [overcpp.agreement_report(d, args.commit or "") for d in machine_dirs(args.results)]
        text = "\n\n".join(t for t in found if t)
        if not text:
            raise asvrun.RunError("fewer than two over-C++ runs of that commit (cuda-bench over-cpp makes one)")
    else:
        if args.commit:
            runs = [(m, d) for m, d in runs if d["commit_hash"].startswith(args.commit)]
        if not runs:
            raise asvrun.RunError(f"no results in {args.results}" + (f" of {args.commit}" if args.commit else "")
                                  + " (cuda-bench run makes some)")
        rows = overview.rows_of(args.results, runs, steps, known)
        order = list(dict.fromkeys(r["machine"] for r in rows))
        if args.commit:
            text = "\n\n".join(report.markdown([r for r in rows if r["machine"] == m]) for m in order)
        else:
            told = {m: summary.landing(m, [d for n, d in runs if n == m], steps[m], known,
                                       history.work(args.results, m),
                                       results.unreadable_results(args.results, m, known)) for m in order}
            text = report.landing(told, rows, known)
    banner = report.unreadable_markdown(results.noted(args.results), args.results)
    if banner:  # on top; the issue's marker stays its first line
        first, _, rest = text.partition("\n") if text.startswith(report.MARKER) else ("", "", text)
        text = "\n".join(filter(None, [first, banner, rest]))
    print(text)
    if args.output:
        args.output.write_text(text + "\n")
    return status
