"""``cuda-bench bisect BASE HEAD [-b CASE ...]``: the first commit between BASE and HEAD at which
cases got slower, found with paired measurement (``cuda_bench.compare.bisect``): the span measured
whole in one pass where it fits a block, else narrowed by halves, each round a one-pass window
(``cuda_bench.compare.onepass``). Each round is kept in a folder; with a GPU, the answer goes into
the history (``results/<machine>/bisects.jsonl``), where the flag's page and the nightly issue name
it."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from cuda_bench.commands.common import (
    asv_options,
    block_option,
    command_line,
    log,
    paired_options,
    settings_of,
    this_machine,
)
from cuda_bench.compare import bisect, gate, keep
from cuda_bench.foundations import process
from cuda_bench.foundations.paths import RESULTS, WORK, label
from cuda_bench.foundations.status import INCOMPLETE, OK, worst
from cuda_bench.results import records
from cuda_bench.run import asvrun


def add(sub):
    p = sub.add_parser(
        "bisect",
        description="the first commit of main's line between BASE and HEAD at which cases got "
        "slower, by paired measurement: BASE against HEAD first (the total, for each case), then "
        "the commits from BASE to HEAD measured in one pass where they fit a block (--block), "
        "else BASE, the middle and HEAD, then the half whose step flags a case, until a flagged "
        "step joins two adjacent commits. Each case asked about gets one answer: found (the "
        "commit, its title and pull request, the case's ratio with its interval), spread (its "
        "total beyond its threshold, no step alone flagging it: the steps that carry it), not "
        "confirmed (a flag its span measured again does not repeat), could not be measured (the "
        "error), or nothing (its total measured within its threshold). Each round is kept in "
        "--out. BASE must be on HEAD's first-parent line (for a release tag on its own branch, "
        "the commit its branch leaves main at). Exit status, the worst over the cases asked "
        "about: 1 when a case was found or spread, 2 when one was not confirmed or could not be "
        "measured (or a round lost process pairs), else 0.",
    )
    asv_options(p, results_dir=False)
    paired_options(p)
    p.add_argument("base", metavar="BASE", help="the commit before the change (a SHA, tag, branch)")
    p.add_argument("head", metavar="HEAD", help="a commit at which the cases are slower")
    block_option(p)
    p.add_argument(
        "--out",
        metavar="DIR",
        help="BASE against HEAD (total/) and each round's window (round-N/window.json, its "
        "steps), and bisect.json (default .asv/bisect/BASE-HEAD)",
    )


def main(args, argv):
    settings = settings_of(args)
    command = command_line(argv)
    name, info = this_machine(args)
    config = asvrun.derived_conf(args.repo, args.bindings, None, args.system_site)
    conf = json.loads(config.read_text())
    repo = asvrun.local_repo(conf)
    base = asvrun.resolve_one(repo, args.base)
    span = [base, *reversed(asvrun.check_revisions(repo, f"{base}..{args.head}"))]
    on_line(repo, span, args.base)
    cases = set(gate.case_names(args.bench, settings.benchmark_dir)) if args.bench else None
    out = Path(args.out or WORK / "bisect" / f"{label(args.base)}-{label(args.head)}")
    log(
        f"bisect: {len(span) - 1} commits after {base[:9]} up to {span[-1][:9]}, "
        + (f"{len(cases)} cases" if cases else "every case")
        + f"; each round kept in {out}"
    )
    rounds = []

    def measure(commits):
        kept = keep.into_folder(
            conf,
            repo,
            commits,
            out / (f"round-{len(rounds)}" if rounds else "total"),
            calibrated=RESULTS / name,
            settings=settings,
            bench=args.bench,
            block=args.block,
            command=command,
            info=info,
            progress=log,
        )
        rounds.append((kept.seconds + kept.build_seconds, kept.found, kept.reused == kept.blocks))
        return kept.found

    answer = bisect.bisect(span, measure, cases, fits=args.block, progress=log)
    named = [s["head"] for s, _ in answer.found]
    described, _ = asvrun.describe_commits(repo, named)
    titles = {c: d["title"] for c, d in described.items()}
    said = bisect.answer_lines(answer, cases, titles)
    seconds = round(sum(s for s, _, _ in rounds), 1)
    said.append(
        f"BASE against HEAD and {len(rounds) - 1} rounds, {answer.timed} commit timings, "
        f"{seconds:g} s on {name}; each in {out}"
    )
    for line in said:
        print(line)
    record = bisect.record_of(answer, base, span[-1], cases) | {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": seconds,
        "command": command,
        "machine": info,
    }
    out.mkdir(parents=True, exist_ok=True)
    process.write_whole(out / "bisect.json", json.dumps(record | {"said": said}, indent=1) + "\n")
    if all(reused for _, _, reused in rounds):
        log(f"bisect: nothing measured now ({out} holds every round): its answer is recorded")
    else:
        records.append(RESULTS / name, "bisect", record)  # the flag's page and the issue name it
    lost = any(d["errors"] or d.get("lost") for _, found, _ in rounds for d in found)
    return worst([bisect.status_of(answer), INCOMPLETE if lost else OK])


def on_line(repo, span, base_name):
    """RunError unless ``span`` (BASE, then HEAD's first-parent commits after it) is one line: the
    oldest commit after BASE has BASE as its first parent. A BASE off that line (a release tag on
    its own branch) would pair it with a commit of main that it is not the parent of."""
    if len(span) < 2:
        raise asvrun.RunError(
            f"no commit after {base_name} on the line up to HEAD: nothing to bisect"
        )
    parent = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", f"{span[1]}^1"], capture_output=True, text=True
    ).stdout.strip()
    if parent != span[0]:
        fork = subprocess.run(
            ["git", "-C", str(repo), "merge-base", span[0], span[-1]],
            capture_output=True,
            text=True,
        ).stdout.strip()
        raise asvrun.RunError(
            f"{base_name} is not on HEAD's first-parent line (a release branch?): bisect from the "
            f"commit where its line leaves it, {fork[:12] or 'git merge-base BASE HEAD'}"
        )
