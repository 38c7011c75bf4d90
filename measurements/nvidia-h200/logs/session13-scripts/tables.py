"""Session 13: the tables of docs/measurement.md, "Over C++ in one state: session 13", from what is committed.
1. The eight over-C++ runs at main of 2026-12-04 read in the fast state (results/), every pair: read as
   recorded, and read over every process (each record's "all").
2. Per machine start, the injected builds (measurements/.../overhead-spin*-s13-*) against that start's runs
   at main, for the injected case and its neighbour, beside the paired A/B engine's reading of the same build
   on the same start (paired-injected-spin*-s13-*; call 1 ran none).
Run from the repository root: PYTHONPATH=. python measurements/nvidia-h200/logs/session13-scripts/tables.py
"""
import json
import statistics
from pathlib import Path

from cuda_bench import report, results

M = Path("measurements/nvidia-h200")
runs = [r for r in results.overhead_runs("results", "nvidia-h200")
        if r["commit"].startswith("cb56ab9f9") and report.fast_kind(report.run_kind(r))
        and "-s13-" in report.run_label(r)]  # session 13's; later sessions' runs have tables of their own
every = [{**r, "cases": [{**c, "ratio": c["all"]["ratio"]} for c in r["cases"]]} for r in runs]
print(f"{len(runs)} runs, {len({report.machine_start(r) for r in runs})} machine starts\n")
print("| read | pairs on one start reaching 90% of cases | pairs across starts reaching 90% | share of cases, lowest–median |")
print("|---|--:|--:|---|")
for words, records in (("fast state (the default)", runs), ("over every process (as before)", every)):
    pairs = report.agreement(records)
    cells = []
    for same in (True, False):
        mine = [p for p in pairs if p["same_start"] is same]
        cells.append(f"{sum(p['agree'] >= 0.9 * p['cases'] for p in mine)} of {len(mine)}")
    shares = sorted(p["agree"] / p["cases"] for p in pairs)
    print(f"| {words} | {cells[0]} | {cells[1]} | {shares[0]:.0%}–{statistics.median(shares):.0%} |")

names = ["bench_device.SetCurrent.time_set_current('core')", "bench_device.CurrentDevice.time_current_device('core')"]
short = lambda n: n.split(".")[1] + "('core')"  # noqa: E731
print("\n| start (UTC) | build | case | over C++ at main (runs a, b) | at the build | moved | A/B engine, same start |")
print("|---|---|---|---|---|--:|---|")
for path in sorted(M.glob("overhead-spin*-s13-*/overhead.json")):
    spin = json.loads(path.read_text())
    call = path.parent.name.rsplit("-", 1)[1]  # s13 call: call1, call2, ...
    mains = [r for r in runs if report.machine_start(r) == report.machine_start(spin)]
    build = path.parent.name.split("-")[1]
    ab = M / f"paired-injected-{build}-s13-{call}" / "summary.json"
    ab_cases = {c["name"]: c for c in json.loads(ab.read_text())["cases"]} if ab.exists() else {}
    for name in names:
        at = lambda r: next(c for c in r["cases"] if c["name"] == name)  # noqa: E731
        base = ", ".join(f"×{at(r)['ratio']:.2f} [{at(r)['low']:.2f}, {at(r)['high']:.2f}]" for r in mains)
        c = at(spin)
        moved = c["ratio"] / statistics.mean(at(r)["ratio"] for r in mains) - 1
        a = ab_cases.get(name)
        engine = f"×{a['ratio']:.3f} [{a['low']:.3f}, {a['high']:.3f}] ({a['verdict']})" if a else "not run"
        print(f"| {spin['host']['boot'][11:16]} | {build} | `{short(name)}` | {base} | ×{c['ratio']:.2f} "
              f"[{c['low']:.2f}, {c['high']:.2f}] | {moved:+.1%} | {engine} |")
