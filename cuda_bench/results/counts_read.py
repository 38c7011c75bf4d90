"""Stage 3, results: what the work per call says (``cuda_bench.foundations.counts`` counts it): a
case's work in a line, a counts record as a table, and how two commits' counts differ, with what a
comparison cannot see. The pages, the comment and the reports read counts through it.
"""

from __future__ import annotations

from fractions import Fraction

from cuda_bench.foundations.names import split_case
from cuda_bench.foundations.text import code


# --- the record and its differences ---------------------------------------------------------------
def case_label(name):
    """``bench_event.EventCreate.time_event_create('core')`` -> ``EventCreate('core')``."""
    benchmark, combo = split_case(name)
    cls = benchmark.split(".")[1] if benchmark.count(".") >= 2 else benchmark
    return f"{cls}({', '.join(combo)})" if combo else cls


def signed(value):
    """+1, -2, +0.5: a change of a count."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:+d}" if isinstance(value, int) else f"{value:+.6g}"


def _delta(base, head):
    """{name: head - base} of two {name: per call}, the names whose count changed."""
    out = {}
    for name in sorted(set(base) | set(head)):
        change = _sub(head.get(name, 0), base.get(name, 0))
        if change:
            out[name] = change
    return out


def _sub(a, b):
    value = Fraction(a).limit_denominator(10**6) - Fraction(b).limit_denominator(10**6)
    return int(value) if value.denominator == 1 else round(float(value), 6)


def changes(base_case, head_case, base_record=None, head_record=None):
    """What changed between one case's two counts, as [(what, change)]: CUDA calls by name (where
    both sides counted them), NVRTC calls, Python and C calls (where both counted them the same
    way), net blocks; a count that either side found unsteady is left out."""
    unsteady = set(base_case.get("unsteady") or ()) | set(head_case.get("unsteady") or ())
    out = []
    if (
        base_case.get("cuda") is not None
        and head_case.get("cuda") is not None
        and "cuda" not in unsteady
    ):
        out += list(_delta(base_case["cuda"], head_case["cuda"]).items())
    if "nvrtc" not in unsteady:
        out += list(_delta(base_case.get("nvrtc") or {}, head_case.get("nvrtc") or {}).items())
    mechanism = (base_record or {}).get("mechanism", base_case.get("mechanism"))
    same_way = mechanism == (head_record or {}).get("mechanism", head_case.get("mechanism"))
    for key, what in (
        ("python_calls", "Python calls"),
        ("c_calls", "C calls"),
        ("net_blocks", "net blocks"),
    ):
        if key in unsteady or (key != "net_blocks" and not same_way):
            continue
        change = _sub(head_case[key], base_case[key])
        if change:
            out.append((what, change))
    return out


def changed_work(base, head):
    """{case name: what changed} for every case counted in both records whose work per call changed:
    ``"+1 cuCtxGetCurrent, +14 Python calls, +2 net blocks"``."""
    base_cases = {c["name"]: c for c in base["cases"]}
    out = {}
    for case in head["cases"]:
        found = base_cases.get(case["name"])
        if found is None:
            continue
        changed = changes(found, case, base, head)
        if changed:
            out[case["name"]] = ", ".join(f"{signed(value)} {what}" for what, value in changed)
    return out


def diff(base, head):
    """{case name: text} for every case counted in both records whose work per call changed:
    ``"`EventCreate('core')`: +1 cuCtxGetCurrent, +14 Python calls, +2 net blocks"``."""
    return {
        name: f"`{case_label(name)}`: {text}" for name, text in changed_work(base, head).items()
    }


def caveats(base, head):
    """What the differences leave out, one sentence each: CUDA calls not counted on a side, NVRTC
    calls seen on one side only, unsteady counts, Python calls counted by two mechanisms."""
    out = []
    missing = [
        (side, record)
        for side, record in (("base", base), ("head", head))
        if record.get("cuda_counted") is False
    ]
    if len(missing) == 2 and base.get("cuda_why") == head.get("cuda_why"):
        out.append(f"CUDA calls were not counted on either side ({base.get('cuda_why')}).")
    else:
        out += [
            f"CUDA calls were not counted on the {side} side ({record.get('cuda_why')})."
            for side, record in missing
        ]
    heads = {c["name"]: c for c in head["cases"]}
    uncounted = [
        c["name"]
        for c in base["cases"]
        if c["name"] in heads and (c.get("cuda") is None or heads[c["name"]].get("cuda") is None)
    ]
    if uncounted and not missing:
        out.append(
            "CUDA calls of "
            f"`{case_label(uncounted[0])}`{' and others' if len(uncounted) > 1 else ''} were not "
            "counted at both commits: not compared."
        )
    vanished = [
        c["name"]
        for c in base["cases"]
        if c["name"] in heads and bool(c.get("nvrtc")) != bool(heads[c["name"]].get("nvrtc"))
    ]
    if vanished:
        out.append(
            "NVRTC calls are those seen from Python: where a case's fall to none or rise from none "
            f"(`{case_label(vanished[0])}`{' and others' if len(vanished) > 1 else ''}), its NVRTC "
            "calls may have moved into Cython or out of it, where they are not seen, rather than "
            "changed."
        )
    unsteady = [
        (c["name"], c["unsteady"])
        for record in (base, head)
        for c in record["cases"]
        if c.get("unsteady") and c["name"] in heads
    ]
    if unsteady:
        name, which = unsteady[0]
        out.append(
            "Counts that two runs in one process did not agree on are left out "
            f"(`{case_label(name)}`: "
            f"{', '.join(which)}{'; and others' if len(unsteady) > 1 else ''})."
        )
    if base.get("mechanism") != head.get("mechanism"):
        out.append(
            f"Python and C calls were counted by {base.get('mechanism')} on one side and "
            f"{head.get('mechanism')} on the other, which count differently: not compared."
        )
    return out


def _calls_text(found):
    return (
        ", ".join(f"{name} {value}" for name, value in sorted(found.items())) if found else "none"
    )


def work_line(case):
    """One case's work per call in a line: ``"CUDA cuCtxSetCurrent 1; 6 Python calls, 2 C calls, 0
    net blocks"``."""
    cuda = (
        f"CUDA {_calls_text(case['cuda'])}"
        if case["cuda"] is not None
        else "CUDA calls not counted"
    )
    nvrtc = f"; NVRTC {_calls_text(case['nvrtc'])}" if case["nvrtc"] else ""
    return (
        f"{cuda}{nvrtc}; {case['python_calls']} Python calls, {case['c_calls']} C calls, "
        f"{case['net_blocks']} net blocks"
    )


def markdown(record):
    """One commit's counts as a Markdown table."""
    cuda, settings = record.get("cuda_counted"), record["settings"]
    out = [
        f"### Work per call at {code(record['rev'])} ({record['commit'][:12]})",
        "",
        f"Counted over {settings['calls']} calls of each case's timed body "
        f"({settings['slow_calls']} for the operations timed one call per body), after a warm-up "
        "that is not counted, twice (≠ marks the counts the second run counted differently). "
        f"Python and C calls: {record['mechanism']}. Net blocks: sys.getallocatedblocks() after "
        f"less before, with the garbage collector off. CUDA calls: {record['cuda_why']}. NVRTC "
        f"calls: {record['nvrtc_why']}.",
        "",
        "| case | CUDA calls | NVRTC calls | Python calls | C calls | net blocks |",
        "|---|---|---|--:|--:|--:|",
    ]
    for case in record["cases"]:
        mark = f" ≠ {', '.join(case['unsteady'])}" if case["unsteady"] else ""
        cuda_text = (
            _calls_text(case["cuda"])
            if case["cuda"] is not None
            else ("n/a" if cuda is False else "—")
        )
        out.append(
            f"| `{case_label(case['name'])}`{mark} | {cuda_text} | {_calls_text(case['nvrtc'])} | "
            f"{case['python_calls']} | {case['c_calls']} | {case['net_blocks']} |"
        )
    if record["skipped"]:
        skipped = record["skipped"]
        out += [
            "",
            f"{len(skipped)} case{'s' if len(skipped) != 1 else ''} skipped (e.g. "
            f"`{next(iter(skipped))}`: {next(iter(skipped.values()))}).",
        ]
    if record["errors"]:
        out += ["", "Not counted:", ""] + [
            f"- `{name}`: {(text or '?').strip().splitlines()[-1]}"
            for name, text in sorted(record["errors"].items())
        ]
    return "\n".join(out) + "\n"


def diff_markdown(base, head):
    """The differences of two commits' counts, as Markdown."""
    found = diff(base, head)
    common = len({c["name"] for c in base["cases"]} & {c["name"] for c in head["cases"]})
    out = [f"### Work per call, {code(base['rev'])} → {code(head['rev'])}", ""]
    if found:
        out += [
            f"{len(found)} of {common} cases counted on both sides do different work per call:",
            "",
        ]
        out += [f"- {text}" for text in found.values()]
    else:
        out += [f"No case's work per call changed ({common} counted on both sides)."]
    notes = caveats(base, head)
    if notes:
        out += ["", *notes]
    return "\n".join(out) + "\n"
