"""Session 11: give the over-C++ records written before records kept the twins' version (``twins``) the
version they ran, where git history proves it, so the overview's spread across runs compares like with like.

twins.cpp, bench_cpp's timing code (Cpp, measure_all, calls_for), its flags and sample counts are unchanged
since 69500aa (2026-12-03T19:32:08Z; `git diff 69500aa HEAD -- benchmarks/cpp benchmarks/bench_cpp.py` adds
only the version hash), so every record dated after it ran version 3245fe7f3c6c087e, the version the
newest records report themselves. Records from before it (sessions 8 and 9) ran other twins (StreamSync,
EventQuery, EventSync on a shared stream) and stay without the field. Numbers are untouched; the stamped
records say so (``twins_from``). Run from the repository root: python measurements/.../stamp_twins.py
"""
import json
from pathlib import Path

PATH = Path("results/nvidia-h200/overhead.jsonl")
SINCE, VERSION = "2026-12-03T19:32:08Z", "3245fe7f3c6c087e"

records = [json.loads(line) for line in PATH.read_text().splitlines() if line.strip()]
stamped = 0
for record in records:
    if "twins" not in record and record["date"] > SINCE:
        record["twins"], record["twins_from"] = VERSION, "git history: twins unchanged since 69500aa (session 11)"
        stamped += 1
assert {r.get("twins") for r in records if r["date"] > SINCE} == {VERSION}
PATH.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))  # as results.append_line
print(f"stamped {stamped} of {len(records)} records")
