"""``cuda-bench``: one command line for every stage, parsing and dispatch only (the commands are
``cuda_bench.commands``). ``cuda-bench COMMAND --help`` says what each option does.

Exit status, for every command: 0 done, nothing regressed; 1 a regression, or a call over
its budget (and nothing else); 2
something could not be measured (a case failed, lost process pairs, a step not made, a measured
value kept) or could not be read (a results file or a record's line of the history, each named: what
the command says leaves it out); 3 the command could not start or stopped on an error (a bad
revision or option, an unreachable repository, a record of the wrong shape: one line, no traceback);
130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
import traceback

from cuda_bench.commands import COMMANDS
from cuda_bench.compare import steps
from cuda_bench.foundations import process
from cuda_bench.foundations.status import ERROR, INCOMPLETE, INTERRUPTED, described, worst
from cuda_bench.publish import dashboard
from cuda_bench.results import asv_files, records
from cuda_bench.run import asvrun

DESCRIPTION = (
    """\
cuda-python-bench: how fast is each cuda.core / cuda.bindings call, commit after commit.

commands:
  init       once per checkout: this machine and the cuda-python clone every command (and plain \
asv) uses
  run        asv run over commits of cuda-python (default: main's newest), pair each newly measured
             commit with the previous one, time the newest against C++ (paired), publish html/
  ladder     the same over every cuda-core-v* release tag and main's head (--new: only releases \
newer
             than the newest measured, each paired with the release before it)
  window     commits measured in one pass: each timed once, each adjacent pair a paired step,
             each commit's asv numbers and work per call; into the history (--out: a folder)
  steps      the paired steps the history lacks, made now (--recheck: flags not yet confirmed)
  compare    BASE vs HEAD with the paired engine: the pull-request gate (exit 1 on a regression)
  aa         the paired engine on one commit against itself: calibrates each case's threshold
  bisect     the first commit between BASE and HEAD at which cases got slower, by paired
             measurement (one pass where it fits, else by halves)
  over-cpp   each Python form against its C++ twin, sample by sample in one process, at one commit
  counts     the work per call of every case at one commit or two (CUDA API calls by name, NVRTC \
calls,
             Python and C calls, net memory blocks), counted, not timed; with two, what changed
  plan       what this machine's history lacks, most valuable first, with minutes each (--run \
--budget:
             as much of it as fits)
  publish    html/ from results/ alone (self-contained: no network, no clone)
  serve      html/ on http://127.0.0.1:8080
  report     the history as Markdown (the front page, --releases, --steps, --across, --agreement, \
--issue)
  prebuild   build several commits into the wheel cache at once, before a run
  upgrade    the records in results/ brought to the current schema

examples:
  cuda-bench init --repo ~/src/cuda-python
  cuda-bench run                                  # newest commit of main
  cuda-bench run HEAD~20..HEAD                    # 20 first-parent commits to HEAD (as `asv run`)
  cuda-bench compare main my-branch               # the pull-request gate
  cuda-bench aa main                              # thresholds for this machine
  cuda-bench bisect v1 v2 -b SetCurrent           # which commit made SetCurrent slower
  cuda-bench counts cuda-core-v0.3.2 main         # what each call does, and what changed

"""
    + textwrap.fill("exit status: " + described(), 100)
    + "\n"
)


class Parser(argparse.ArgumentParser):
    """argparse's parser, but a bad option or argument exits 3 (the command could not start), as
    every other one-line error does: argparse's own 2 says that something could not be measured
    here."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(ERROR, f"{self.prog}: error: {message}\n")


def parser():
    top = Parser(
        prog="cuda-bench",
        usage="%(prog)s [-h] COMMAND ...",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = top.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS, prog="cuda-bench"
    )  # the commands are listed once, in DESCRIPTION
    for module in dict.fromkeys(COMMANDS.values()):
        module.add(sub)
    return top


# what a command can stop on that the user can act on: one line and exit status 3
ERRORS = (asvrun.RunError, dashboard.DashboardError, records.RecordError, *steps.MEASURE_ERRORS)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    top = parser()
    args, rest = top.parse_known_args(argv)
    if rest and args.command not in ("run", "ladder"):
        top.error(f"unrecognised arguments: {' '.join(rest)}")
    module = COMMANDS[args.command]
    start = time.monotonic()
    # SIGTERM stops a command as Ctrl-C does: its children stopped, its files removed
    process.stop_on_sigterm()
    asv_files.forget()  # what this command could not read, noted as it reads
    try:
        # every temporary folder of the command and of what it runs, removed when it ends
        with process.temporary_folder():
            status = (
                module.main(args, rest, argv)
                if args.command in ("run", "ladder")
                else module.main(args, argv)
            )
        return with_unreadable(status)
    except ERRORS as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return ERROR
    except KeyboardInterrupt:
        print(f"bench: interrupted after {time.monotonic() - start:.0f} s", file=sys.stderr)
        return INTERRUPTED
    except Exception:  # a bug: its traceback, and an exit status no caller reads as "a regression"
        traceback.print_exc()
        print("bench: stopped on an internal error (above)", file=sys.stderr)
        return ERROR
    finally:
        asvrun.remove_temporary()


def with_unreadable(status):
    """A command's exit status, and what it could not read: each file and line named once, where it
    was read, a line at the end counting them, and INCOMPLETE (2) unless the status says more (a
    regression, 1, still outranks it: ``status.worst``)."""
    return worst([status, INCOMPLETE]) if asv_files.say_unreadable("bench") else status


if __name__ == "__main__":
    sys.exit(main())
