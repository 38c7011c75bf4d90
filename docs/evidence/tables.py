"""Print the tables of docs/evidence/*/summary.md from the records beside them (standard library only).

    python3 docs/evidence/tables.py              # every table
    python3 docs/evidence/tables.py aa-runs      # one folder's

Each folder's summary.md takes the numbers of its tables from this output (some tables there are narrower).
"""

from __future__ import annotations

import collections
import gzip
import itertools
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOOR = "bench_harness.Floor.time_noop('noop')"
SET_CURRENT = "bench_device.SetCurrent.time_set_current('core')"
SET_CURRENT_CPP = "bench_cpp.Cpp.track_latency('set_current')"
PROGRAM_OPTIONS = "bench_program.ProgramOptionsCreate.time_program_options_create('core')"


def read(path):
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = data.decode()
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        return [json.loads(line) for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return json.loads(text)


def ratio(case):
    return f"×{case['ratio']:.3f} [{case['low']:.3f}, {case['high']:.3f}]"


def ns(value):
    return f"{value / 1000:.2f} µs" if value >= 1000 else f"{value:.0f} ns"


def short(name):
    """bench_device.SetCurrent.time_set_current('core') -> SetCurrent('core')"""
    cls = name.split(".")[1]
    return cls + name[name.index("("):] if "(" in name else cls


def summaries(folder, pattern="*.summary.json.gz"):
    return [(p.name.removesuffix(".summary.json.gz"), read(p)) for p in sorted((HERE / folder / "records").glob(pattern))]


def paired_table(folder, pattern="*.summary.json.gz"):
    """One row per paired run: what it flagged, the floor control, the interval width and the time."""
    print("| record | layouts | cases | flagged | floor (control) | median interval width | measuring |")
    print("|---|---|--:|---|---|--:|--:|")
    for name, run in summaries(folder, pattern):
        cases = [c for c in run["cases"] if not c.get("control") and c.get("low") is not None]
        flagged = [f"{short(c['name'])} {c['verdict']} {ratio(c)}" for c in cases
                   if c.get("verdict") not in ("same", None)]
        floor = next((ratio(c) for c in run["cases"] if c["name"] == FLOOR and c.get("low") is not None), "—")
        width = statistics.median(c["high"] - c["low"] for c in cases)
        layouts = run.get("settings", {}).get("layouts") or "fixed"
        print(f"| {name} | {layouts} | {len(cases)} | {'; '.join(flagged) or 'none'} | {floor} | "
              f"{100 * width:.2f}% | {run['seconds']:.0f} s |")


def aa_runs():
    paired_table("aa-runs")


def injected_slowdowns():
    paired_table("injected-slowdowns")
    print()
    print("| record | SetCurrent('core') per call, base → head | threshold |")
    print("|---|---|--:|")
    for name, run in summaries("injected-slowdowns"):
        case = next(c for c in run["cases"] if c["name"] == SET_CURRENT)
        print(f"| {name} | {ns(case['base_ns'])} → {ns(case['head_ns'])} | {100 * case['threshold']:.1f}% |")


def release_steps():
    paired_table("release-steps")
    print()
    for name, run in summaries("release-steps"):
        for verdict in ("regression", "improvement"):
            found = sorted((c for c in run["cases"] if c.get("verdict") == verdict),
                           key=lambda c: -abs(c["ratio"] - 1))
            print(f"- {name} {verdict}s ({len(found)}): " + ", ".join(f"{short(c['name'])} {ratio(c)}" for c in found))
    print()
    print("DeviceMemoryResource taken apart (ns per call, best of 7 loops, three rounds):")
    print()
    rows = {}
    for path in sorted((HERE / "release-steps/records/dmr-0.4.2-0.5.1").glob("round*.jsonl")):
        for line in read(path):
            if line.get("ns") is not None:
                rows.setdefault(line["what"], {}).setdefault(line["version"], []).append(line["ns"])
    print("| what | 0.4.2 | 0.5.1 |")
    print("|---|--:|--:|")
    for what, by in rows.items():
        cells = [f"{min(by[v]):.0f}–{max(by[v]):.0f}" if v in by else "—" for v in ("0.4.2", "0.5.1")]
        print(f"| {what} | {cells[0]} | {cells[1]} |")
    print()
    print("The step cuda-core 0.5.1 → main (cb56ab9f9), three machine starts:")
    print()
    records = []
    for path in sorted((HERE / "release-steps/records/v0.5.1-main").glob("*.jsonl.gz")):
        records += read(path)
    records.sort(key=lambda r: r["date"])
    flagged = sorted({c["name"] for r in records for c in r["cases"] if c.get("verdict") == "regression"})
    print("| case | " + " | ".join(r["date"][11:16] + " UTC" for r in records) + " |")
    print("|---|" + "--:|" * len(records))
    for name in flagged:
        cells = []
        for r in records:
            case = next((c for c in r["cases"] if c["name"] == name), None)
            cells.append("—" if case is None else ratio(case) + ("" if case["verdict"] == "regression" else " same"))
        print(f"| {short(name)} | " + " | ".join(cells) + " |")


def one_start_not_enough():
    steps = [r for r in read(HERE / "release-steps/records/steps.jsonl.gz")
             if r["base"].startswith("76bac4e11") and r["head"].startswith("c278ecb3d")]
    runs = [(f"history step {r['date'][:16]}", r) for r in steps]
    runs += summaries("one-start-not-enough")
    print("| measurement | machine start (boot, UTC) | cases | ProgramOptionsCreate('core') | per call | verdict |")
    print("|---|---|--:|---|---|---|")
    for name, run in sorted(runs, key=lambda x: x[1]["date"]):
        case = next(c for c in run["cases"] if c["name"] == PROGRAM_OPTIONS)
        cases = sum(1 for c in run["cases"] if not c.get("control"))
        print(f"| {name} | {run['host']['boot'][11:19]} | {cases} | {ratio(case)} | "
              f"{ns(case['base_ns'])} → {ns(case['head_ns'])} | {case['verdict']} |")


def memory_layouts():
    paired_table("memory-layouts")


def lost_pairs():
    paired_table("lost-pairs")
    print()
    for name, run in summaries("lost-pairs"):
        print(f"- {name}: lost {json.dumps(run.get('lost'))}")
        print(f"- {name}: pairs per case: " + ", ".join(
            f"{n} pairs: {k} cases" for n, k in sorted(
                collections.Counter(len(c.get("pairs") or []) for c in run["cases"] if c.get("low")).items())))


def pairs_and_seconds():
    print("| record | pairs × seconds | measuring | median interval width | largest \\|ratio − 1\\| | SetCurrent('core') |")
    print("|---|---|--:|--:|--:|---|")
    for name, run in summaries("pairs-and-seconds"):
        cases = [c for c in run["cases"] if not c.get("control") and c.get("low") is not None]
        s = run["settings"]
        width = statistics.median(c["high"] - c["low"] for c in cases)
        far = max(abs(c["ratio"] - 1) for c in cases)
        case = next(c for c in cases if c["name"] == SET_CURRENT)
        print(f"| {name} | {s['pairs']} × {s['seconds_per_case_and_pair']} s | {run['seconds']:.0f} s | "
              f"{100 * width:.2f}% | {100 * far:.1f}% | {ratio(case)} {case['verdict']} |")


def thresholds():
    records = read(HERE / "thresholds/records/calibration.jsonl.gz")
    highest = {}
    print("| A/A calibration | layouts | cases | threshold min–max | median | above the 1% floor |")
    print("|---|---|--:|---|--:|--:|")
    for r in records:
        t = r["thresholds"]
        for k, v in t.items():
            highest[k] = max(highest.get(k, 0), v)
        values = sorted(t.values())
        print(f"| {r['date'][:16]} | {r['settings'].get('layouts') or 'fixed'} | {len(values)} | "
              f"{100 * values[0]:.1f}–{100 * values[-1]:.1f}% | {100 * statistics.median(values):.1f}% | "
              f"{sum(v > 0.01 for v in values)} |")
    values = sorted(highest.values())
    print(f"| highest per case (what verdicts use) | | {len(values)} | {100 * values[0]:.1f}–{100 * values[-1]:.1f}% | "
          f"{100 * statistics.median(values):.1f}% | {sum(v > 0.01 for v in values)} |")
    print()
    print(f"SetCurrent('core'): {100 * highest[SET_CURRENT]:.1f}%")


def over_cpp():
    runs = read(HERE / "over-cpp/records/over-cpp-ratios.json.gz")
    # the eight fast-state runs at main on the four machine starts of 2026-12-04 04:00-04:49 UTC
    eight = [r for r in runs if r["state"] == "fast" and r["date"].startswith("2026-12-04T04")]
    print(f"{len(eight)} runs, {len({r['boot'] for r in eight})} machine starts")
    print()
    print("| reading | pairs on one start reaching 90% of cases | pairs across starts reaching 90% "
          "| share of cases agreeing within 5%, lowest / median |")
    print("|---|--:|--:|---|")
    for key, label in (("ratio", "fast state (the default)"), ("all", "over every process")):
        same, cross, shares = [0, 0], [0, 0], []
        for a, b in itertools.combinations(eight, 2):
            common = [k for k in a["cases"] if k in b["cases"] and a["cases"][k][key] and b["cases"][k][key]]
            agree = sum(max(a["cases"][k][key] / b["cases"][k][key], b["cases"][k][key] / a["cases"][k][key]) <= 1.05
                        for k in common)
            share = agree / len(common)
            shares.append(share)
            tally = same if a["boot"] == b["boot"] else cross
            tally[0] += share >= 0.9
            tally[1] += 1
        print(f"| {label} | {same[0]} of {same[1]} | {cross[0]} of {cross[1]} | "
              f"{100 * min(shares):.0f}% / {100 * statistics.median(shares):.0f}% |")


def over_cpp_layouts():
    """The over-C++ runs of 2026-12-03 22:33-22:45 UTC, read over every process: two machine starts (the runs of
    22:33-22:35 on one, 22:41-22:45 on the next; those records do not name their start), each with runs with a
    layout per process (random) and with one fixed layout."""
    runs = read(HERE / "over-cpp/records/over-cpp-ratios.json.gz")
    chosen = [r for r in runs if "2026-12-03T22:33" <= r["date"] < "2026-12-03T22:46"]
    start = {r["date"]: 1 if r["date"] < "2026-12-03T22:40" else 2 for r in chosen}
    found = {}
    for a, b in itertools.combinations(chosen, 2):
        common = [k for k in a["cases"] if k in b["cases"] and a["cases"][k]["ratio"] and b["cases"][k]["ratio"]]
        agree = sum(max(a["cases"][k]["ratio"] / b["cases"][k]["ratio"], b["cases"][k]["ratio"] / a["cases"][k]["ratio"])
                    <= 1.05 for k in common)
        kind = " / ".join(sorted((a["layouts"], b["layouts"])))
        where = "one start" if start[a["date"]] == start[b["date"]] else "two starts"
        found.setdefault((kind, where), []).append(round(100 * agree / len(common)))
    print("| layouts compared | | pairs | cases with the same ratio within 5% |")
    print("|---|---|--:|---|")
    for (kind, where), shares in sorted(found.items()):
        print(f"| {kind} | {where} | {len(shares)} | {', '.join(f'{x}%' for x in sorted(shares))} |")


def harness_floor():
    rows = read(HERE / "harness-floor/records/asv-medians-main.json.gz")
    print("| commit | floor | SetCurrent('core') | its C++ twin | cases measured / skipped | benchmarks' own time |")
    print("|---|--:|--:|--:|---|--:|")
    for r in sorted(rows, key=lambda r: r["date"]):
        v = r["values"]
        measured = sum(x is not None for x in v.values())
        print(f"| `{r['commit'][:9]}` | {ns(v[FLOOR] * 1e9)} | {ns(v[SET_CURRENT] * 1e9)} | "
              f"{ns(v[SET_CURRENT_CPP] * 1e9)} | {measured} / {len(v) - measured} | "
              f"{r['durations']:.0f} s |")


def unpaired_noise():
    runs = []
    for name in ("asv-aa-run-1.json.gz", "asv-aa-run-2.json.gz"):
        d = read(HERE / "unpaired-noise/records" / name)
        values = {}
        for bench, v in d["results"].items():
            for combo, x in zip(itertools.product(*v[1]) if v[1] else [()], v[0]):
                if isinstance(x, float) and x == x:
                    values[(bench, combo)] = x
        runs.append(values)
    common = set(runs[0]) & set(runs[1])
    ratios = [runs[1][k] / runs[0][k] for k in common]
    python = [abs(r - 1) for k, r in zip(common, ratios) if not k[0].startswith("bench_cpp")]
    cpp = [abs(r - 1) for k, r in zip(common, ratios) if k[0].startswith("bench_cpp")]
    print(f"{len(common)} cases measured in both asv runs of cb56ab9f9; second run over first: "
          f"×{min(ratios):.2f} to ×{max(ratios):.2f}; median |ratio − 1|: Python forms {100 * statistics.median(python):.0f}% "
          f"({len(python)} cases), C++ twins {100 * statistics.median(cpp):.0f}% ({len(cpp)} cases)")


def one_pass_window():
    """Each window's steps (what each flagged), and the window against the paired step on the same pair."""
    folder = HERE / "one-pass-window" / "records"
    for name in ("aa-window.json.gz", "injected-window.json.gz"):
        window = read(folder / name)
        print(f"{name}: {len(window['commits'])} builds, {window['seconds']:.0f} s")
        print("| step | slower | faster | same | what changed |")
        print("|---|--:|--:|--:|---|")
        for step in window["steps"]:
            cases = [c for c in step["cases"] if not c["control"]]
            said = [f"{short(c['name'])} {ratio(c)}" for c in cases if c["verdict"] != "same"]
            count = collections.Counter(c["verdict"] for c in cases)
            print(f"| {step['base'][:9]} → {step['head'][:9]} | {count['regression']} | {count['improvement']} | "
                  f"{count['same']} | {'; '.join(said) or '—'} |")
        print()
    window = read(folder / "injected-window.json.gz")
    paired = read(folder / "injected-pairwise.summary.json.gz")
    step = next(s for s in window["steps"] if (s["base"], s["head"]) == (paired["base"], paired["head"]))
    ours = {c["name"]: c for c in step["cases"] if not c["control"]}
    theirs = {c["name"]: c for c in paired["cases"] if not c["control"]}
    both = sorted(set(ours) & set(theirs))
    overlap = [n for n in both if max(ours[n]["low"], theirs[n]["low"]) <= min(ours[n]["high"], theirs[n]["high"])]
    inside = [n for n in both if theirs[n]["low"] <= ours[n]["ratio"] <= theirs[n]["high"]
              or ours[n]["low"] <= theirs[n]["ratio"] <= ours[n]["high"]]
    width = [statistics.median(c[n]["high"] - c[n]["low"] for n in both) for c in (ours, theirs)]
    groups = [statistics.median(c[n]["groups"] for n in both) for c in (ours, theirs)]
    print(f"{paired['base'][:9]} → {paired['head'][:9]}: intervals overlap on {len(overlap)} of {len(both)}; a ratio "
          f"inside the other's interval on {len(inside)}; median width {100 * width[0]:.2f} % (window), "
          f"{100 * width[1]:.2f} % (step); median groups {groups[0]:.0f}, {groups[1]:.0f}")
    print("| case | window | paired step |")
    print("|---|---|---|")
    for n in both:
        if n not in overlap or ours[n]["verdict"] != "same" or theirs[n]["verdict"] != "same":
            print(f"| {short(n)} | {ratio(ours[n])} {ours[n]['verdict']} | {ratio(theirs[n])} {theirs[n]['verdict']} |")


SECTIONS = {
    "aa-runs": aa_runs, "injected-slowdowns": injected_slowdowns, "release-steps": release_steps,
    "one-start-not-enough": one_start_not_enough, "memory-layouts": memory_layouts, "lost-pairs": lost_pairs,
    "pairs-and-seconds": pairs_and_seconds, "thresholds": thresholds, "over-cpp": over_cpp,
    "over-cpp-layouts": over_cpp_layouts,
    "harness-floor": harness_floor, "unpaired-noise": unpaired_noise, "one-pass-window": one_pass_window,
}

if __name__ == "__main__":
    for section in sys.argv[1:] or SECTIONS:
        print(f"## {section}\n")
        SECTIONS[section]()
        print()
