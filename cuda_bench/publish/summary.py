"""Stage 5, publish: what the paired engine says, as data for the pages and the reports.

For each machine: main's head against the previous measured commit and against the newest release
(each a paired step, or None where the history has none), the regressions still open, each cuda-core
release against the one before it, and each case's paired chain along the history. Nothing here
decides: a change is a case a paired step judged (``history.steps``: its ``verdict`` over every
measurement), never a difference of asv's medians. The dashboard (``cuda_bench.publish.dashboard``)
and the Markdown (``cuda_bench.publish.report``) render these.
"""

from __future__ import annotations

import math

from cuda_bench.build import wheels
from cuda_bench.foundations import stats
from cuda_bench.foundations.names import is_control, library_of, release_version
from cuda_bench.results import asv_files, counts_read, history

LIBRARIES = ("core", "bindings", "cupy")
CHANGES = ("regression", "improvement")


# --- commits --------------------------------------------------------------------------------------
def name(commit, known):
    """How every page names a commit: its cuda-core release tag, else its first 9 hex digits."""
    return asv_files.commit_name(commit, known)


def tag(commit, known):
    return asv_files.release_name(known.get(commit) or {})


def head_release(step, known):
    """The release a release step ends at, as ``cuda-core-vX.Y.Z``: what commits.json says of its
    head, else what the step's own record says (``release_tags``: a history whose commits.json is
    missing or unreadable still orders its releases); None when neither says."""
    return tag(step["head"], known) or (step.get("release_tags") or [None, None])[-1]


def place(commit, known):
    """Where a commit stands in the history: by commit date, then by place on main."""
    info = known.get(commit) or {}
    return info.get("date") or 0, info.get("position") or 0, commit


def order(commits, known):
    """``commits`` in the history's order (:func:`place`)."""
    return sorted(set(commits), key=lambda c: place(c, known))


def on_main(commit, known):
    info = known.get(commit) or {}
    return info.get("position") is not None or not info.get("recorded", False)


def main_head(commits, known):
    """The newest commit of main among ``commits``: the furthest along main's first-parent history,
    else (a commit commits.json does not place) the newest by date that is no release."""
    placed = [c for c in commits if (known.get(c) or {}).get("position") is not None]
    if placed:
        return max(placed, key=lambda c: known[c]["position"])
    unplaced = [c for c in order(commits, known) if not tag(c, known)]
    return unplaced[-1] if unplaced else None


# --- steps ----------------------------------------------------------------------------------------
def step_kind(step, known):
    """ "release": a cuda-core release against the one before (the ladder); "since release": a
    release against a commit of main (the ladder's last step, to main's head); "main": a commit of
    main against the previous one."""
    if history.release_step(step) or (tag(step["base"], known) and tag(step["head"], known)):
        return "release"
    if tag(step["base"], known) and not tag(step["head"], known):
        return "since release"
    return "main"


def status(case):
    """How a case of a history step stands: "confirmed" or "not yet confirmed" (a regression), "not
    reproduced", else its verdict ("improvement", "same"); ``stats.repeated_verdict`` decides,
    ``stats.CONFIRMED_RULE`` says the rule."""
    if case["verdict"] == "regression":
        return "confirmed" if case.get("confirmed") else "not yet confirmed"
    return case["verdict"]


def status_word(case):
    """The status in the words the pages use: "slower, confirmed", "slower, not yet confirmed",
    "faster", "not reproduced", "same"."""
    state = status(case)
    if case["verdict"] == "regression":
        return f"slower, {state}"
    return {"improvement": "faster"}.get(state, state)


def counted(step):
    """The cases of a step that count (not the controls: the C++ twins and the harness floor; not
    the cases put down to a change of the environment, :func:`put_down`)."""
    if "cuda-bindings" not in history.environment_change(step):  # nothing is put down to it
        return [c for c in step["cases"] if not is_control(c["name"]) and not c.get("control")]
    return [
        c
        for c in step["cases"]
        if not is_control(c["name"]) and not c.get("control") and not history.attributed(step, c)
    ]


def put_down(step):
    """The cases of a step put down to a change of its environment (``history.attributed``: the
    cuda.bindings cases of a step across a cuda-bindings wheel change), those judged slower or
    faster first."""
    found = [c for c in step["cases"] if not is_control(c["name"]) and history.attributed(step, c)]
    return sorted(
        found,
        key=lambda c: (
            c["verdict"] not in CHANGES,
            -abs(math.log(c["ratio"])) if c["ratio"] > 0 else 0,
        ),
    )


def counts(step):
    """{"regression", "improvement", "same", "not reproduced": cases; "not measured": cases no
    measurement of the step has; "one side": cases only one build has}."""
    cases = counted(step)
    found = {
        verdict: sum(c["verdict"] == verdict for c in cases)
        for verdict in ("regression", "improvement", "same", "not reproduced")
    }
    found["not measured"] = len(step.get("errors") or {})
    found["one side"] = len(step.get("only") or {})
    found["identical"] = history.identical(step)
    found["put down"] = sum(c["verdict"] in CHANGES for c in put_down(step))
    found["environment"] = environment_words(step)
    return found


#: :func:`counts`'s keys in the order every page and report shows them, each with its words
COUNT_WORDS = (
    ("regression", "slower"),
    ("improvement", "faster"),
    ("same", "same"),
    ("not reproduced", "not reproduced"),
    ("not measured", "not measured"),
    ("one side", "on one side only"),
)


def counts_words(found):
    """A step's :func:`counts` as the pages and reports say them, in order: ["2 slower", "1 faster",
    "97 same", "1 not reproduced", "1 not measured", "2 on one side only", "11 changed with
    cuda-bindings 12.9.10 → 13.3.1"] (the last four only where there are any); for identical
    builds, one line that says so."""
    if found.get("identical"):
        return ["identical builds: nothing to measure (both sides build the same wheels)"]
    parts = [f"{found[key]} {words}" for key, words in COUNT_WORDS[:3]]
    parts += [f"{found[key]} {words}" for key, words in COUNT_WORDS[3:] if found[key]]
    if found.get("environment"):
        parts.append(f"{found['put down']} changed with {found['environment']}")
    return parts


def one_side(step):
    """The cases of a step that only one build has (the other skips them), by name: [(name, side,
    words)], the words "only on the head side: cuda.core 0.1.0 has no Device.arch"; as many as
    :func:`counts` counts ("one side")."""
    found = []
    for name, (side, *why) in sorted((step.get("only") or {}).items()):
        said = f": {why[0]}" if why and why[0] else ""
        found.append((name, side, f"only on the {side} side{said}"))
    return found


def environment_words(step):
    """A step's change of environment in words ("cuda-bindings 12.9.10 → 13.3.1"), or ""."""
    return ", ".join(
        f"{package} {base} → {head}"
        for package, (base, head) in history.environment_change(step).items()
    )


def built_from_words(step):
    """What differs between a step's builds, in words: "cuda_core and cuda_bindings rebuilt;
    cuda_pathfinder the same", from the step's ``built_from``; "" for a record that does not say."""
    changed = step.get("packages_changed")
    if changed is None:
        return ""
    same = [p for p in (step.get("built_from") or {}).get("base", {}) if p not in changed]
    words = []
    if changed:
        words.append(f"{' and '.join(changed)} differ{'s' if len(changed) == 1 else ''}")
    if same:
        words.append(f"{' and '.join(same)} the same")
    compilers = wheels.compiler_change(step.get("compiled_by"))
    if compilers:
        words.append(compilers)
    return "; ".join(words)


def changed(step):
    """The cases the step judged slower or faster, slower first: regressions by ratio (largest
    first), then improvements (largest change first)."""
    cases = counted(step)
    slower = sorted((c for c in cases if c["verdict"] == "regression"), key=lambda c: -c["ratio"])
    faster = sorted((c for c in cases if c["verdict"] == "improvement"), key=lambda c: c["ratio"])
    return slower + faster


def not_reproduced(step):
    return [c for c in counted(step) if c["verdict"] == "not reproduced"]


def geomean(step):
    """{library: (geometric mean of its cases' ratios, cases)} over every case of the step that
    times the library (same, slower or faster alike; not the controls); C++ twins as "cpp" where the
    step measured them."""
    logs = {}
    for case in step["cases"]:
        api = "cpp" if case["name"].startswith("bench_cpp.") else library_of(case["name"])
        if api and case.get("ratio", 0) > 0 and (api == "cpp" or not is_control(case["name"])):
            logs.setdefault(api, []).append(math.log(case["ratio"]))
    return {api: (math.exp(sum(xs) / len(xs)), len(xs)) for api, xs in logs.items()}


#: the packages whose versions make an environment: counts made in another are not this step's
ENVIRONMENT = ("python", "cuda-bindings", "cuda-core", "cuda-pathfinder")


def counted_at(found, versions=None):
    """One commit's work per call in the environment of ``versions`` (a step side's package
    versions; None: that of the newest record): its counts records (``found``, oldest first) whose
    versions agree with those (a package that one side names and the other does not is a
    disagreement), merged, each case from the newest record that counted it (one that counted its
    CUDA calls before one that did not: a later pass without CUPTI, or of a few cases only, hides
    nothing). None where no record fits."""
    found = list(found or ())
    if not versions and found:  # no environment asked for: the newest record's
        versions = found[-1]["versions"]
    fits = [
        r
        for r in found
        if all(
            r["versions"].get(k) == versions.get(k)
            for k in ENVIRONMENT
            if k in r["versions"] or k in versions
        )
    ]
    if not fits:
        return None
    cases = {}
    for record in fits:
        for case in record["cases"]:
            kept = cases.get(case["name"])
            if kept is None or case["cuda"] is not None or kept["cuda"] is None:
                cases[case["name"]] = case
    merged = dict(fits[-1], cases=list(cases.values()))
    merged["cuda_counted"] = any(c["cuda"] is not None for c in merged["cases"])
    # why, from a record that says so
    said = [r for r in fits if r["cuda_counted"] == merged["cuda_counted"]]
    merged["cuda_why"] = said[-1]["cuda_why"] if said else fits[-1]["cuda_why"]
    return merged


def work_changed(step, work):
    """What changed in the work per call from a step's base to its head, each side counted in the
    step's own environment (``work``: {commit: counts records}, ``history.work``;
    :func:`counted_at`): ``changed`` {case name: "+1 cuCtxGetCurrent, +14 Python calls"}
    (``counts_read.changed_work``), ``common`` the cases counted at both, ``caveats`` what the
    differences leave out; None where either side was not counted. Counts are exact: a change needs
    no interval."""
    versions = step.get("versions") or {}
    base = counted_at((work or {}).get(step["base"]), versions.get("base"))
    head = counted_at((work or {}).get(step["head"]), versions.get("head"))
    if base is None or head is None:
        return None
    common = {c["name"] for c in base["cases"]} & {c["name"] for c in head["cases"]}
    if not common:  # nothing counted at both: nothing to say of the work
        return None
    return {
        "changed": counts_read.changed_work(base, head),
        "common": len(common),
        "caveats": counts_read.caveats(base, head),
    }


def work_said(work):
    """How the pages say what :func:`work_changed` found, after "Work per call": (whether it
    changed, the words). "The same" only where nothing was left out of the comparison (no
    caveat)."""
    cases = f"{work['common']} case{'s' if work['common'] != 1 else ''}"
    if work["changed"]:
        return True, f"changed in {len(work['changed'])} of the {cases} counted at both commits"
    if work["caveats"]:
        return False, f"no change in what both commits counted ({cases})"
    return False, f"the same in all {cases} counted at both commits"


def described(step, known, work=None):
    """A step as the pages show it: base and head with their names, the step itself, its counts, the
    changed cases (slower first), the flags another start did not reproduce, a geometric mean per
    library, and what changed in the work per call (:func:`work_changed`, None where a side was not
    counted)."""
    return {
        "base": step["base"],
        "head": step["head"],
        "base_name": name(step["base"], known),
        "head_name": name(step["head"], known),
        "kind": step_kind(step, known),
        "step": step,
        "counts": counts(step),
        "changed": changed(step),
        "not_reproduced": not_reproduced(step),
        "geomean": geomean(step),
        "work": work_changed(step, work),
        "identical": history.identical(step),
        "environment": history.environment_change(step),
        "put_down": put_down(step),
        "built_from": step.get("built_from"),
        "packages_changed": step.get("packages_changed"),
    }


# --- the landing page -----------------------------------------------------------------------------
def landing(machine, runs_of, steps, known, work=None, unreadable=None):
    """What the landing page says of one machine (``runs_of``: its results files, oldest first;
    ``work``: its counts records by commit, ``history.work``; ``unreadable``: {commit: (file, line,
    why)} of its results files that could not be read, ``asv_files.unreadable_results``):

    * ``lost_head``: main's newest measured commit where its results file could not be read
      (``commit``, ``name``, ``title``, ``file``, ``line``, ``why``), else None: it is named, and
      everything else is of the newest commit that could be read;
    * ``head``: main's newest measured commit that could be read (``commit``, ``name``, ``title``,
      ``date``), ``measured``: when asv last measured it (ms);
    * ``previous``: the previous measured commit of main and the paired step from it to the head
      (``described``), or ``step`` None where the history has none;
    * ``release``: the newest release measured on the machine (its tag and commit) and the paired
      step from it to the head, or ``step`` None;
    * ``open``: main's regressions still open, [(step, case)] newest first, each confirmed or not
      yet confirmed; ``release_flags``: those the release ladder's steps hold, as ``open``;
      ``release_open``: how many.
    """
    measured = [d["commit_hash"] for d in runs_of]
    head = main_head(measured, known)
    out = {
        "machine": machine,
        "head": None,
        "previous": None,
        "release": None,
        "open": [],
        "release_open": 0,
        "release_flags": [],
        "params": runs_of[-1]["params"] if runs_of else {},
        "lost_head": None,
    }
    out["lost_head"] = lost_head(measured, known, unreadable)
    kinds = {(s["base"], s["head"]): step_kind(s, known) for s in steps}
    main_steps = [s for s in steps if kinds[(s["base"], s["head"])] == "main"]
    out["open"] = history.flagged_steps(main_steps)
    out["release_flags"] = history.flagged_steps(
        [s for s in steps if kinds[(s["base"], s["head"])] == "release"]
    )
    out["release_open"] = len(out["release_flags"])
    if head is None:
        return out
    info = known.get(head) or {}
    out["head"] = {
        "commit": head,
        "name": name(head, known),
        "title": info.get("title") or "",
        "date": info.get("date"),
        "measured": max(
            (asv_files.measured_at(d) for d in runs_of if d["commit_hash"] == head), default=0
        ),
    }
    shown = history.builds(runs_of, steps).get(head)
    out["previous"] = previous_of(head, measured, main_steps, known, work, shown)
    released = [c for c in order(measured, known) if tag(c, known) and c != head]
    if released:
        newest = max(released, key=lambda c: release_version(tag(c, known)))
        step = next((s for s in steps if s["base"] == newest and s["head"] == head), None)
        out["release"] = {
            "commit": newest,
            "name": name(newest, known),
            "step": step,
            **({"described": described(step, known, work)} if step else {}),
        }
    return out


def lost_head(measured, known, unreadable):
    """Main's newest measured commit where its results file could not be read (``commit``,
    ``name``, ``title``, ``file``, ``line``, ``why``), else None."""
    lost = main_head([*measured, *(unreadable or {})], known)
    if lost is None or lost in measured:
        return None
    file, line, why = unreadable[lost]
    return {
        "commit": lost,
        "name": name(lost, known),
        "title": (known.get(lost) or {}).get("title") or "",
        "file": file,
        "line": line,
        "why": why,
    }


def step_into(head, main_steps, known, build=None):
    """The paired step of main into ``head`` the pages show: of the head's shown ``build``
    (:func:`builds`) where one is, from the nearest measured commit before, the newest; None where
    the history has none."""
    into = [s for s in main_steps if s["head"] == head]

    def rank(step):
        return history.family(step) == build, place(step["base"], known), step.get("date", "")

    return max(into, key=rank) if into else None


def previous_of(head, measured, main_steps, known, work, build=None):
    """The previous measured commit of main before ``head``, and the paired step from it to the head
    (:func:`step_into`; ``step`` None where the history has none)."""
    line = [c for c in order(measured, known) if on_main(c, known) and not tag(c, known)]
    before = line[: line.index(head)] if head in line else []
    step = step_into(head, main_steps, known, build)
    previous = {
        "commit": step["base"] if step else (before[-1] if before else None),
        "step": step,
        **({"described": described(step, known, work)} if step else {}),
    }
    if previous["commit"]:
        previous["name"] = name(previous["commit"], known)
    return previous


# --- releases -------------------------------------------------------------------------------------
def across(step, steps, known, work=None):
    """The step of ``steps`` pairing ``step``'s commits across a cuda-bindings change, where
    ``step`` is its ``history.twin`` (one cuda-bindings on both sides), described: context beside
    the verdict; else None."""
    other = next((s for s in steps if history.twin(s, steps) is step), None)
    return described(other, known, work) if other else None


def releases(steps, known, head=None, work=None):
    """Each release step of the history (a cuda-core release against the one before it), newest
    release first, as :func:`described` (with ``work``, the counts records by commit; ``across``:
    the same commits paired across a cuda-bindings change, where one cuda-bindings on both sides
    judges them); and the step from the newest release to main's ``head`` (``to_head``: described,
    or None where the history does not have it; ``newest``: that release's commit, or None)."""
    released = [s for s in history.judged(steps) if step_kind(s, known) == "release"]
    released.sort(
        key=lambda s: release_version(head_release(s, known) or "cuda-core-v0.0.0"), reverse=True
    )
    ladder = [
        described(s, known, work) | {"across": across(s, steps, known, work)} for s in released
    ]
    tagged = {s["head"] for s in steps if tag(s["head"], known)} | {
        s["base"] for s in steps if tag(s["base"], known)
    }
    newest = max(tagged, key=lambda c: release_version(tag(c, known))) if tagged else None
    to_head = (
        next((s for s in history.judged(steps) if s["base"] == newest and s["head"] == head), None)
        if head
        else None
    )
    return {
        "ladder": ladder,
        "newest": newest,
        "head": head,
        "to_head": described(to_head, known, work) if to_head else None,
    }


# --- the Regressions page -------------------------------------------------------------------------
def regressions(steps, known):
    """Every case a history step flagged: [(step, case, kind)], newest step first, the open ones
    (confirmed, not yet confirmed) before the ones another start did not reproduce. Controls never
    count."""
    found = [
        (s, c)
        for s in history.judged(steps)
        for c in counted(s)
        if c["verdict"] in ("regression", "not reproduced")
    ]
    return _newest_first(found, known)


def thresholds_words(steps, calibrations):
    """What a machine's verdicts were judged against, in words: its thresholds calibrated per case
    by an A/A run on the machine (``calibrations``: its calibration records), or the default for
    every case where none did; and how many of its steps were judged with the default alone (every
    counted case's threshold the default: paired before the calibration, or where the results
    folder had none). No page claims a calibration that was not made, or that a step did not use."""
    default = f"the default {stats.DEFAULT_THRESHOLD:.0%}"
    judged = [s for s in history.judged(steps) if counted(s)]
    flat = sum(all(c["threshold"] == stats.DEFAULT_THRESHOLD for c in counted(s)) for s in judged)
    if calibrations:
        cases = len({name for r in calibrations for name in r["thresholds"]})
        text = (
            f"calibrated per case by an A/A run on this machine "
            f"({min(r['date'] for r in calibrations)[:10]}; {cases} cases, any other {default})"
        )
    else:
        text = f"{default} for every case: no A/A run has calibrated this machine"
    if calibrations and flat:
        every = "all" if flat == len(judged) else f"{flat} of the {len(judged)}"
        text += f"; {every} paired steps shown were judged with {default} alone"
    return text


def put_down_flags(steps, known):
    """Every slowdown a history step flagged in a case put down to a change of its environment
    (:func:`put_down`: the cuda.bindings cases of a step across a cuda-bindings wheel change), which
    :func:`regressions` does not count: [(step, case, kind)], in its order."""
    found = [
        (s, c) for s in history.judged(steps) for c in put_down(s) if c["verdict"] == "regression"
    ]
    return _newest_first(found, known)


def _newest_first(found, known):
    """(step, case) pairs as the Regressions page lists them, each with its step's kind: the open
    ones first, newest step first, the largest ratio first within a step."""
    found = sorted(found, key=lambda sc: -sc[1]["ratio"])
    # stable: the largest first within a step
    found.sort(key=lambda sc: sc[0]["date"], reverse=True)
    found.sort(key=lambda sc: sc[1]["verdict"] != "regression")
    return [(s, c, step_kind(s, known)) for s, c in found]


# --- paired chains --------------------------------------------------------------------------------
def flags(steps, known):
    """{case: [(step, case record, kind)]} for every case a step judged slower, faster or not
    reproduced."""
    out = {}
    for step in steps:
        for case in step["cases"]:
            if case["verdict"] in (*CHANGES, "not reproduced") and not is_control(case["name"]):
                out.setdefault(case["name"], []).append((step, case, step_kind(step, known)))
    return out
