"""``cuda-bench report``: the history as Markdown: the front page (``--markdown``, the default),
each release against the one before, the paired steps, the release ladder's medians across, how
over-C++ runs agree, the nightly issue, and README.md's section of what the dashboard says
(``--readme``, which writes it there)."""

from __future__ import annotations

import sys
from pathlib import Path

from cuda_bench.foundations.paths import RESULTS, machine_dirs
from cuda_bench.foundations.status import OK, REGRESSION
from cuda_bench.publish import overview, read, readme, report
from cuda_bench.results import overcpp_read
from cuda_bench.run import asvrun


def add(sub):
    p = sub.add_parser(
        "report",
        description="the history in results/ as Markdown: the dashboard's front page (main's head, "
        "its paired verdicts, the open regressions, each operation), or what an option names",
    )
    p.add_argument(
        "--results", type=Path, default=RESULTS, help="the results folder (default results/)"
    )
    p.add_argument(
        "--commit", help="each operation at this commit (a prefix) instead of the front page"
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--markdown", action="store_true", help="the front page (the default): docs/results.md"
    )
    what.add_argument(
        "--releases",
        action="store_true",
        help="each cuda-core release against the one before it, "
        "and the newest release against main's head",
    )
    what.add_argument(
        "--across",
        nargs="+",
        metavar="[LABEL=]COMMIT",
        help="one column per commit (a release ladder) for one api",
    )
    what.add_argument("--steps", action="store_true", help="the history's paired steps")
    what.add_argument(
        "--issue",
        action="store_true",
        help="the nightly issue's body; exit 1 when a paired step of main flagged a regression",
    )
    what.add_argument(
        "--readme",
        action="store_true",
        help="write README.md's section 'What the dashboard says today' from the history, with "
        "the code the pages are drawn with, and print it",
    )
    what.add_argument(
        "--agreement",
        action="store_true",
        help="how far the recorded over-C++ runs of a commit "
        "(--commit, else the newest measured) agree, every pair",
    )
    p.add_argument(
        "--api", default="core", choices=overview.APIS, help="with --across: the library"
    )
    p.add_argument("--output", type=Path, help="also write the text here")


def main(args, argv):
    found = read.load(args.results)
    known, runs = found.known, found.runs
    status = OK
    if args.issue:
        bisects = {name: machine.bisects for name, machine in found.machines.items()}
        text, count = report.issue_body(found.steps, known=known, bisects_by_machine=bisects)
        status = REGRESSION if count else OK
    elif args.steps:
        text = (
            "\n\n".join(report.steps_markdown(m, s) for m, s in found.steps.items() if s)
            or "No paired steps yet."
        )
    elif args.across:
        text = report.across(runs, args.across, args.api)
    elif args.releases:
        text = (
            "\n\n".join(
                report.releases_markdown(name, machine.releases, known)
                for name, machine in found.machines.items()
            )
            or "No results yet."
        )
    elif args.readme:
        text = readme.section(found).rstrip("\n")
        said = "written" if readme.write(found) else "already up to date"
        print(f"{readme.README}: {said}", file=sys.stderr)
    elif args.agreement:
        said = [
            overcpp_read.agreement_report(d, args.commit or "") for d in machine_dirs(args.results)
        ]
        text = "\n\n".join(t for t in said if t)
        if not text:
            raise asvrun.RunError(
                "fewer than two over-C++ runs of that commit (cuda-bench over-cpp makes one)"
            )
    elif args.commit:
        rows = found.rows_at(args.commit)
        if not rows:
            raise asvrun.RunError(
                f"no results in {args.results} of {args.commit} (cuda-bench run makes some)"
            )
        text = "\n\n".join(
            report.markdown([r for r in rows if r["machine"] == m])
            for m in dict.fromkeys(r["machine"] for r in rows)
        )
    elif not runs:
        raise asvrun.RunError(f"no results in {args.results} (cuda-bench run makes some)")
    else:
        text = report.landing(
            {name: machine.landing for name, machine in found.machines.items()}, found.rows, known
        )
    # what --commit read too
    banner = report.unreadable_markdown(found.noted(), args.results)
    if banner:  # on top; the issue's marker stays its first line
        first, _, rest = text.partition("\n") if text.startswith(report.MARKER) else ("", "", text)
        text = "\n".join(filter(None, [first, banner, rest]))
    print(text)
    if args.output:
        args.output.write_text(text + "\n")
    return status
