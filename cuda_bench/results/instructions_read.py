"""Stage 3, results: what the instructions per call say (``cuda_bench.foundations.instructions``
counts them): a commit's table, which cases moved between two commits and by how much, where the
instructions went (the functions whose counts changed most), and what the timing and the count say
together. The pages, the comment and ``cuda-bench counts`` read instruction counts through it.
"""

from __future__ import annotations

from cuda_bench.build import wheels
from cuda_bench.foundations.text import code
from cuda_bench.results.counts_read import case_label

#: what an instruction count is and what it is not, said wherever one is shown
WHAT = (
    "Instructions per call: what the calling thread executes per call, counted by valgrind's "
    "callgrind (cuda.core's compiled code, CPython's and the driver's user-space code alike), the "
    "difference of two run lengths, so that set-up and warm-up cancel. Not counted: the driver's "
    "kernel side (its ioctls) and any waiting, other threads, the GPU. An instruction is not a "
    "cycle: cache misses, branches and memory layout cost time without instructions, so time can "
    "change where the count does not, and a count can change by less than the time."
)
#: a case's count moves only beyond this fraction, whatever its spread: one commit counted twice,
#: in fresh processes, repeats within it (docs/method.md, instructions per call)
SAME_WITHIN = 0.005


def number(value):
    """An instruction count as text: whole above 10, else to one decimal."""
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.1f}"


def signed(value):
    text = number(value)
    return text if text.startswith("-") else f"+{text}"


def percent(fraction):
    """``+5.1 %``; ``+0.03 %`` where one decimal would read as none."""
    digits = 1 if abs(fraction) >= 0.001 or fraction == 0 else 2
    return f"{fraction:+.{digits}%}".replace("%", " %")


# --- two commits ----------------------------------------------------------------------------------
#: the settings of a record that say how it counted (its processes do not): records counted by
#: two methods are not compared (a case's warm-up changes what its count includes)
METHOD = ("fast", "slow", "probe", "layouts")


def comparable(base, head):
    """None where two records' counts may be compared, else why not: counts are compared only
    between runs of one method (:data:`METHOD`), one valgrind version and one Python, of packages
    compiled by one compiler and one Cython where both records say what compiled them."""
    methods = [{k: (r.get("settings") or {}).get(k) for k in METHOD} for r in (base, head)]
    if methods[0] != methods[1]:
        return (
            "instructions were counted by two methods ("
            + "; ".join(
                f"{k} {methods[0][k]} and {methods[1][k]}"
                for k in METHOD
                if methods[0][k] != methods[1][k]
            )
            + "): not compared"
        )
    if base.get("valgrind") != head.get("valgrind"):
        return (
            f"instructions were counted by valgrind {base.get('valgrind')} on one side and "
            f"{head.get('valgrind')} on the other: not compared"
        )
    python = [
        ".".join(r.get("versions", {}).get("python", "").split(".")[:2]) for r in (base, head)
    ]
    if python[0] != python[1]:
        return f"instructions were counted on Python {python[0]} and {python[1]}: not compared"
    for package in sorted(set(base.get("built_with") or {}) & set(head.get("built_with") or {})):
        tools = [wheels.compiler_of(r["built_with"][package]) for r in (base, head)]
        if tools[0] != tools[1]:
            said = ["; ".join(f"{k} {v}" for k, v in t.items()) for t in tools]
            return (
                f"{package} was compiled by {said[0]} on one side and {said[1]} on the other: "
                "the machine code differs with them, and so do the counts; not compared"
            )
    return None


def compilers_unknown(base, head):
    """The packages whose compiler one record says and the other does not (a wheel built before
    wheel cache entries kept it): their counts are compared, but a compiler's change would read as
    theirs."""
    said = [set(r.get("built_with") or {}) for r in (base, head)]
    return sorted(said[0] ^ said[1])


def bound(base_case, head_case):
    """How far a case's count must move to be named: its larger repeat spread, at least
    :data:`SAME_WITHIN`."""
    return max(base_case["spread"], head_case["spread"], SAME_WITHIN)


def compared(base, head):
    """{case name: {"base", "head", "change", "relative", "bound", "moved"}} of every case counted
    in both records (none where :func:`comparable` says no)."""
    if comparable(base, head):
        return {}
    heads = {c["name"]: c for c in head["cases"]}
    out = {}
    for case in base["cases"]:
        other = heads.get(case["name"])
        if other is None or not case["per_call"]:
            continue
        change = other["per_call"] - case["per_call"]
        relative = change / case["per_call"]
        limit = bound(case, other)
        out[case["name"]] = {
            "base": case["per_call"],
            "head": other["per_call"],
            "change": change,
            "relative": relative,
            "bound": limit,
            "moved": abs(relative) > limit,
        }
    return out


def moved(base, head):
    """:func:`compared`'s cases whose count moved beyond their bound."""
    return {name: entry for name, entry in compared(base, head).items() if entry["moved"]}


def change_text(entry):
    """``+312 instructions per call (+5.1 %)``."""
    return f"{signed(entry['change'])} instructions per call ({percent(entry['relative'])})"


def agreement(verdict, entry):
    """What a case's timing verdict ("regression", "improvement", "same", or None where it was not
    timed) and its instruction count (``entry``: :func:`compared`'s, or None where it was not
    counted) say together, in words; None where neither changed or one is missing."""
    if entry is None or verdict is None:
        return None
    up = entry["moved"] and entry["change"] > 0
    down = entry["moved"] and entry["change"] < 0
    if verdict == "regression":
        if up:
            return "slower, with more instructions per call"
        if down:
            return "slower with fewer instructions per call: the time went elsewhere"
        return (
            "slower with the same instructions per call: time that the calling thread's "
            "instructions do not explain (memory, the driver's kernel side, waiting, the GPU)"
        )
    if verdict == "improvement":
        if down:
            return "faster, with fewer instructions per call"
        if up:
            return "faster with more instructions per call: the time went elsewhere"
        return "faster with the same instructions per call"
    if up or down:
        return (
            f"{'more' if up else 'fewer'} instructions per call, with no change in the time "
            "beyond its threshold"
        )
    return None


#: the packages whose versions make an environment: counts made in another are not a step's
ENVIRONMENT = ("python", "cuda-bindings", "cuda-core", "cuda-pathfinder")


def recorded_at(found, versions=None):
    """The newest of one commit's instruction records (``found``, oldest first) counted in the
    environment of ``versions`` (a step side's package versions; None: the newest record); None
    where none fits."""
    found = list(found or ())
    if not versions:
        return found[-1] if found else None
    fits = [
        r
        for r in found
        if all(
            r["versions"].get(k) == versions.get(k)
            for k in ENVIRONMENT
            if k in r["versions"] or k in versions
        )
    ]
    return fits[-1] if fits else None


def step_compared(step, instructions):
    """:func:`compared` of a history step's two commits, each counted in the step's own environment
    (``instructions``: {commit: instruction records}); None where either side was not counted or
    the two cannot be compared (another valgrind or Python)."""
    versions = step.get("versions") or {}
    base = recorded_at((instructions or {}).get(step["base"]), versions.get("base"))
    head = recorded_at((instructions or {}).get(step["head"]), versions.get("head"))
    if base is None or head is None or comparable(base, head):
        return None
    return compared(base, head)


def beside_timing(verdict, entry):
    """What a page says of a case's instructions beside its timing verdict: ``+312 instructions per
    call (+5.1 %): slower, with more instructions per call``, or the same with the bound."""
    text = (
        change_text(entry)
        if entry["moved"]
        else f"the same instructions per call (within ±{entry['bound']:.1%})"
    )
    said = agreement(verdict, entry)
    return f"{text}: {said}" if said else text


# --- where the instructions went ------------------------------------------------------------------
def unnamed(name):
    """Whether callgrind named a function by its address (a stripped module's, which Python does
    not reach): two builds place it apart, so it cannot be matched between them."""
    return name.startswith("0x")


def function_changes(base_rows, head_rows):
    """[(function, object, inclusive base, inclusive head, inclusive change, own change)] of two
    commits' function rows ([function, object, self, inclusive] per call, ``instrpass.named``),
    the largest inclusive change first (a call chain from the top down: a differential flame
    chart), then the largest change of a function's own count; a function named by its address
    on one side only is left out (:func:`unnamed`)."""
    base = {(r[0], r[1]): r for r in base_rows}
    head = {(r[0], r[1]): r for r in head_rows}
    out = []
    for key in base.keys() | head.keys():
        if unnamed(key[0]) and (key not in base or key not in head):
            continue
        a, b = base.get(key, [*key, 0, 0]), head.get(key, [*key, 0, 0])
        out.append((*key, a[3], b[3], b[3] - a[3], b[2] - a[2]))
    return sorted(out, key=lambda r: (-round(abs(r[4])), -abs(r[5]), r[0]))


def unmatched(base_rows, head_rows):
    """How many functions named by their address are on one side only (:func:`function_changes`
    leaves them out)."""
    base = {(r[0], r[1]) for r in base_rows if unnamed(r[0])}
    head = {(r[0], r[1]) for r in head_rows if unnamed(r[0])}
    return len(base ^ head)


def went_into(changes):
    """Where the instructions went: of the functions whose inclusive count changed by at least half
    the largest change (the chain of calls down to the change), the one whose own count changed
    most; None where no own count changed by half an instruction."""
    top = max((abs(r[4]) for r in changes), default=0)
    chain = [r for r in changes if abs(r[4]) >= top / 2]
    found = max(chain, key=lambda r: abs(r[5]), default=None)
    return found if found and abs(found[5]) >= 0.5 else None


def short_object(obj):
    """``_launch_config.cpython-312-x86_64-linux-gnu.so`` -> ``_launch_config``."""
    return obj.split(".cpython-")[0] if ".cpython-" in obj else obj


def function_table(base_rows, head_rows, rows=6):
    """Markdown lines: the ``rows`` functions whose inclusive counts per call changed most (and the
    one whose own count changed most, where it is not among them), base → head."""
    changes = function_changes(base_rows, head_rows)
    shown = [r for r in changes if abs(r[4]) >= 0.5][:rows]
    into = went_into(changes)
    if into is not None and into not in shown:
        shown.append(into)
    if not shown:
        return []
    out = [
        "| function | in | inclusive per call, base → head | change | own change |",
        "|---|---|--:|--:|--:|",
    ]
    out += [
        f"| `{f}` | {short_object(o)} | {number(a)} → {number(b)} | {signed(d)} | {signed(s)} |"
        for f, o, a, b, d, s in shown
    ]
    left = unmatched(base_rows, head_rows)
    if left:
        out += [
            "",
            f"{left} function{'s' if left != 1 else ''} without a name (a stripped module's "
            "that Python does not reach) left out: the builds placed them at other addresses.",
        ]
    return out


def went_into_text(base_rows, head_rows):
    """``mostly into `LaunchConfig.__init__ (0x...)` (_launch_config): +300 of its own per call``,
    or ''."""
    into = went_into(function_changes(base_rows, head_rows))
    if into is None:
        return ""
    return (
        f"mostly into `{into[0]}` ({short_object(into[1])}): {signed(into[5])} of its own per call"
    )


# --- as text --------------------------------------------------------------------------------------
def markdown(record):
    """One commit's instructions per call as a Markdown table."""
    settings = record["settings"]
    (short, long), repeats, warmup = settings["fast"]
    (slow_short, slow_long), slow_repeats, slow_warmup = settings["slow"]
    heavy = ""
    if settings.get("probe"):
        after, least = settings["probe"]
        heavy = (
            f", or once after {after} for a case of {least:,} instructions per call or more, as "
            f"one body counted after those {after} says;"
        )
    out = [
        f"### Instructions per call at {code(record['rev'])} ({record['commit'][:12]})",
        "",
        f"Counted by valgrind {record['valgrind']}'s callgrind in {settings['processes']} "
        f"processes, each case in {settings['layouts']} memory layouts (a compilation in one): "
        f"in each, a run of {long} "
        f"bodies less one of {short}, the median of {repeats}, after {warmup} uncounted runs"
        f"{heavy or ';'} {slow_long} less {slow_short}, {slow_repeats}, after {slow_warmup}, for "
        "an operation timed one call per body; the median of the layouts. Spread: the range of the "
        "layouts' values. " + WHAT,
        "",
        "| case | instructions per call | spread | seconds counting |",
        "|---|--:|--:|--:|",
    ]
    out += [
        f"| `{case_label(c['name'])}` | {number(c['per_call'])} | {c['spread']:.2%} | "
        f"{c['seconds'] if c.get('seconds') is not None else '-'} |"
        for c in record["cases"]
    ]
    if record.get("cut"):
        stopped = record.get("interrupted") or []
        out += [
            "",
            "Interrupted: the cases above were counted in every layout they take; the "
            "others were not counted"
            + (
                f", {len(stopped)} of them stopped while being counted: "
                + ", ".join(f"`{case_label(n)}`" for n in stopped)
                if stopped
                else ""
            )
            + ".",
        ]
    if record["skipped"]:
        first = next(iter(record["skipped"].items()))
        out += ["", f"{len(record['skipped'])} skipped (e.g. `{first[0]}`: {first[1]})."]
    if record["errors"]:
        out += ["", "Not counted:", ""] + [
            f"- `{name}`: {(text or '?').strip().splitlines()[-1]}"
            for name, text in sorted(record["errors"].items())
        ]
    return "\n".join(out) + "\n"


def diff_markdown(base, head, base_functions=None, head_functions=None):
    """What moved between two commits' instructions per call, as Markdown: each case beyond its
    spread, with the functions whose counts changed most where both sides' functions are given
    ({case: rows}, ``instrpass.named``)."""
    out = [f"### Instructions per call, {code(base['rev'])} → {code(head['rev'])}", ""]
    why = comparable(base, head)
    if why:
        return "\n".join([*out, why[0].upper() + why[1:] + "."]) + "\n"
    found = compared(base, head)
    changed = {name: e for name, e in found.items() if e["moved"]}
    if not changed:
        out.append(
            f"No case's instructions per call moved beyond its spread ({len(found)} counted on "
            f"both sides, at least {SAME_WITHIN:.1%})."
        )
    else:
        out.append(
            f"{len(changed)} of {len(found)} cases counted on both sides moved beyond their spread:"
        )
    for name, entry in changed.items():
        out += ["", f"- `{case_label(name)}`: {change_text(entry)}, beyond ±{entry['bound']:.1%}"]
        rows = (base_functions or {}).get(name), (head_functions or {}).get(name)
        if rows[0] is not None and rows[1] is not None:
            into = went_into_text(*rows)
            out += [f"  {into}." if into else "", "", *function_table(*rows)]
    unknown = compilers_unknown(base, head)
    if unknown:
        out += [
            "",
            f"What compiled {', '.join(unknown)} is recorded on one side only: a change of "
            "compiler would read as a change of the counts.",
        ]
    return "\n".join([*out, "", WHAT]) + "\n"
