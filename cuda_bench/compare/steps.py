"""Stage 4, compare: the history's paired steps. Each newly measured commit against the previous
measured one on the same machine (``cuda_bench.results.history`` finds them), a step the history
lacks, and a flag measured again on another machine start (the recheck), each appended to
``results/<machine>/steps.jsonl``.

What a step measured is never lost: its summary is written to the step's folder
(``.asv/steps/BASE-HEAD``) before the record goes into the history, and a record that cannot be
written says "measured, not recorded" with the path that holds it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from cuda_bench.build import toolkit
from cuda_bench.compare import comment, gate, paired, summaries
from cuda_bench.foundations import machine, suite
from cuda_bench.foundations.names import HARNESS
from cuda_bench.foundations.paths import WORK
from cuda_bench.foundations.status import INCOMPLETE, OK, REGRESSION, worst
from cuda_bench.foundations.text import interval, measurements, standing
from cuda_bench.results import history, records
from cuda_bench.run import asvrun

# what measuring a step can raise that the user can act on (OSError: a full disk, a folder not
# writable): the step is reported and the other steps still run
MEASURE_ERRORS = (toolkit.BuildError, gate.CompareError, paired.WorkerError, OSError)


def log(message):
    print(f"bench: {message}", file=sys.stderr, flush=True)


@dataclass
class Step:
    base: str
    head: str
    bindings: str  # the CUDA_BENCH_BINDINGS both sides are built with
    cases: list = field(default_factory=list)  # the cases a recheck measures again
    regexes: list = field(default_factory=list)  # the cases to measure, as asv's -b takes them

    @property
    def bench(self):
        """The case regexes the paired engine takes: ``regexes``; or the ``cases`` and the harness
        (a control that must read ×1.000); or [] (every case)."""
        if self.cases:
            return [f"^{re.escape(c)}$" for c in self.cases] + [f"^{re.escape(HARNESS)}\\("]
        return list(self.regexes)


def record_or_say(folder, kind, data, kept_at, what):
    """Append ``data`` to the history; when that fails, say that it was measured and where it is
    kept instead. Whether it was recorded."""
    try:
        records.append(folder, kind, data)
        return True
    except (OSError, records.RecordError) as exc:
        log(
            f"{what}: measured, not recorded in {Path(folder) / records.FILES[kind]} ({exc}); its "
            f"record is in {kept_at}"
        )
        return False


def make(todo, *, conf, machine_name, info, results_dir, settings, command, later):
    """Measure each :class:`Step` of ``todo`` with the paired engine and append it to steps.jsonl.
    ``later``: the command that makes a step that could not be measured. The exit status
    (``status.worst``):
    REGRESSION when a step flagged a case; else INCOMPLETE when a step was not measured, not
    recorded, or measured without some cases; else OK."""
    repo = asvrun.local_repo(conf)
    folder = Path(results_dir) / machine_name
    thresholds = records.calibration(folder)
    tags = asvrun.release_tags(repo)
    incomplete = flagged_any = False
    for i, step in enumerate(todo, 1):
        where = f"{step.base[:9]} -> {step.head[:9]}"
        log(f"step {i}/{len(todo)}: {where}")
        out = WORK / "steps" / f"{step.base[:12]}-{step.head[:12]}"
        release_tags = (
            [tags[step.base], tags[step.head]] if step.base in tags and step.head in tags else None
        )
        try:
            data, _ = gate.pair(
                repo,
                step.base,
                step.head,
                bindings=step.bindings,
                requirements=asvrun.requirements(conf),
                system_site=asvrun.system_site_of(conf),
                kind="step",
                settings=settings,
                bench=step.bench,
                thresholds=thresholds,
                log_dir=out / "logs",
                command=command,
                info=info,
                progress=log,
                always=bool(step.cases),
            )
        except MEASURE_ERRORS as exc:  # the other steps still run
            log(f"step {where} not measured: {exc} (`{later}` makes it later)")
            incomplete = True
            continue
        data |= {"release_tags": release_tags}
        if data.get("identical"):
            if record_or_say(folder, "step", data, "the line below", f"step {where}"):
                log(
                    f"step {where}: identical builds "
                    f"({comment.built_from_text(data['built_from'])}): nothing to measure"
                )
            else:
                print(records.json.dumps(records.stamped(data, "step")), flush=True)
                incomplete = True
            continue
        try:
            # first: the measurement is kept whatever happens to the history
            summaries.write(out, data)
            kept_at = out / "summary.json"
        except OSError as exc:
            log(f"step {where}: its summary could not be written to {out} ({exc})")
            kept_at = "the line below"
        if not record_or_say(folder, "step", data, kept_at, f"step {where}"):
            incomplete = True
            if kept_at == "the line below":
                print(records.json.dumps(records.stamped(data, "step")), flush=True)
            continue
        flagged = paired.regressions(data)
        flagged_any = flagged_any or bool(flagged)
        log(
            f"step {where}: {len(flagged)} regression(s)"
            + "".join(f"\n  {c['name']} {interval(c)}" for c in flagged)
        )
        incomplete = incomplete or summaries.incomplete(data)
    return worst([REGRESSION if flagged_any else OK, INCOMPLETE if incomplete else OK])


def missing(results_dir, machine_name, bindings):
    """(the steps the history lacks for environments of ``bindings``, how many more it lacks in
    others)."""
    found = history.missing_steps(results_dir, machine_name)
    pairs = found.get(bindings, [])
    other = sum(len(more) for spec, more in found.items() if spec != bindings)
    return [Step(base, head, bindings) for base, head in pairs], other


def recheck_todo(results_dir, machine_name, start):
    """The :class:`Step` list that measures the history's flags not yet confirmed again on this
    machine start, each in its own step's cuda-bindings, its flagged cases and the harness (a
    control that must read ×1.000); and the flags made on this very start, which only another start
    can confirm (``history.to_recheck``). Cases the suite no longer has are named and left out."""
    todo, here = history.to_recheck(results_dir, machine_name, start)
    known = set(suite.cases())
    out = []
    for (base, head, bindings), cases in todo.items():
        for case in [c for c in cases if c not in known]:
            log(
                f"steps --recheck: {base[:9]} -> {head[:9]} {case} is not in the suite any more: "
                "not measured"
            )
        cases = [c for c in cases if c in known]
        if cases:
            out.append(Step(base, head, bindings, cases))
    return out, here


def recheck_report(results_dir, machine_name, todo, start):
    """How each rechecked flag stands now, a line each."""
    merged = {
        (s["base"], s["head"], s["bindings"]): s for s in history.steps(results_dir, machine_name)
    }
    lines = []
    for step in todo:
        found = merged[(step.base, step.head, step.bindings)]
        for case in found["cases"]:
            if case["name"] in step.cases and start in {m["start"] for m in case["measurements"]}:
                said = (
                    f" ({standing(case, found['versions'])})"
                    if case["verdict"] == "regression"
                    else ""
                )
                lines.append(
                    f"{step.base[:9]} -> {step.head[:9]} {case['name']}: {case['verdict']}{said}: "
                    f"{measurements(case)}"
                )
    return lines


def this_start():
    """This machine start's id (``machine.host()``'s ``start``), or a RunError: a recheck could not
    tell this start from the one that flagged."""
    host = machine.host()
    if host["start"] is None:
        raise asvrun.RunError(
            "this machine does not say which start it is on (no /proc/sys/kernel/random/boot_id, "
            "no btime in /proc/stat), so a recheck could not tell this start from the one that "
            "flagged"
        )
    return host["start"], host["boot"]
