#!/usr/bin/env bash
# The GPU evidence of instructions per call (docs/method.md rule 20, docs/evidence/instructions), in one call of at
# most 10 minutes on a 16-core GPU box without network, from scripts/offline_carry.sh's carry (.whl/common,
# .whl/cu13, .carry/cuda-python.git, .carry/cuda-headers-13.3.tar.xz and .carry/valgrind.tar.xz):
#
#   1. scripts/inject_check.sh: branch bench-inject-check of the carried clone, main with one extra validation in
#      LaunchConfig.__init__ (compiled work that calls nothing Python sees)
#   2. the change's timing verdict: cuda-bench compare main bench-inject-check on LaunchConfigCreate and the harness
#      floor (the paired engine; it builds both commits' cuda_core at once, against the cuda-bindings 13.3.1 wheel)
#   3. both commits' instructions per call over the whole suite: cuda-bench counts main bench-inject-check
#      --no-counts --out (the callgrind files of each case kept)
#   4. main's instructions again, in a pass of its own: the A/A, and the time of one commit's pass
#   5. the summary (summary.txt): every case's A/A difference, the cases that moved and the function table, the
#      timing verdict beside them, each pass's seconds
#
#   OUT=... scripts/gpu_instructions.sh [SITE]    # SITE: the site-packages with CuPy and numpy
#
# BENCH (environment): a -b regex for the instruction passes instead of the whole suite (a machine without a GPU,
# where a compile under callgrind takes minutes).
# Each step has what is left of DEADLINE seconds (default 570); $OUT/instructions.tar.gz is written after every
# step, so a call cut short still hands back what the steps before made.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:?OUT: the folder that comes back}
site=${1:-/opt/torch/.venv/lib/python3.12/site-packages}
repo=.carry/cuda-python.git
end=$(( $(date +%s) + ${DEADLINE:-570} ))
left() { echo $(( end - $(date +%s) )); }
proof=.asv/instructions-proof
mkdir -p "$proof"
run() {  # a cuda-bench command through offline_run.sh, with what is left of the deadline
    local limit; limit=$(left)
    [ "$limit" -gt 30 ] || { echo "gpu_instructions: no time left for $*" | tee -a "$proof/steps.txt"; return 124; }
    local start; start=$(date +%s)
    timeout --signal=INT --kill-after=20 "$limit" scripts/offline_run.sh .whl/common:.whl/cu13 "$repo" "$site" \
        "$out/run" "$@" > "$proof/$1-$(date +%H%M%S).log" 2>&1
    local status=$?
    echo "$* -> exit $status in $(( $(date +%s) - start )) s" | tee -a "$proof/steps.txt"
    return $status
}
pack() {  # the records, the tables and LaunchConfigCreate's callgrind files (not every case's: 30 MB a commit)
    mkdir -p "$proof/kept"
    for dir in "$proof"/*/*/callgrind; do
        [ -d "$dir" ] || continue
        for f in "$dir"/LaunchConfigCreate_core.*; do
            [ -f "$f" ] && cp "$f" "$proof/kept/$(basename "$(dirname "$(dirname "$dir")")")-$(basename "$(dirname "$dir")")-$(basename "$f")"
        done
    done
    tar -czf "$out/.instructions.tar.gz" --exclude=logs --exclude=callgrind "$proof" &&
        mv -f "$out/.instructions.tar.gz" "$out/instructions.tar.gz"
}
[ -f .carry/valgrind.tar.xz ] || { echo "gpu_instructions: no .carry/valgrind.tar.xz (scripts/offline_carry.sh)" >&2; exit 3; }
scripts/inject_check.sh "$repo" main | tee -a "$proof/steps.txt"
base=main head=bench-inject-check
config="bench_launch.LaunchConfigCreate.time_launch_config_create('core')"
run compare "$base" "$head" --bindings 13.3.1 --kind injected --no-counts --no-instructions \
    -b '^bench_launch\.LaunchConfigCreate' -b '^bench_harness\.Floor' --expected "$config" --out "$proof/timing"
pack
run counts "$base" "$head" --bindings 13.3.1 --no-counts --no-write --out "$proof/both" ${BENCH:+-b "$BENCH"}
pack
run counts "$base" --bindings 13.3.1 --no-counts --no-write --out "$proof/again" ${BENCH:+-b "$BENCH"}
/tmp/cuda-bench-venv/bin/python - "$proof" <<'EOF' | tee "$proof/summary.txt"
import json, sys
from pathlib import Path

from cuda_bench.results import instructions_read as read

proof = Path(sys.argv[1])
def load(path):
    return json.loads(path.read_text()) if path.is_file() else None
base, head, again = (load(proof / f) for f in ("both/main/instructions.json",
                                               "both/bench-inject-check/instructions.json",
                                               "again/main/instructions.json"))
timing = load(proof / "timing/summary.json")
for record, what in ((base, "main"), (head, "bench-inject-check"), (again, "main again")):
    if record:
        print(f"{what}: {len(record['cases'])} cases counted, {len(record['skipped'])} skipped, "
              f"{len(record['errors'])} not counted; pass {record['seconds']} s (valgrind {record['valgrind']})")
if base and again:
    found = read.compared(base, again)
    worst = max(found.items(), key=lambda kv: abs(kv[1]["relative"]))
    within = sum(abs(e["relative"]) <= 0.005 for e in found.values())
    print(f"A/A, main counted twice: {within} of {len(found)} cases within 0.5 %; the farthest "
          f"{read.case_label(worst[0])} {worst[1]['relative']:+.3%}; moved: {sorted(read.moved(base, again))}")
if timing:
    for case in timing["cases"]:
        print(f"timing {read.case_label(case['name'])}: x{case['ratio']:.3f} [{case['low']:.3f}, "
              f"{case['high']:.3f}] {case['verdict']} (threshold {case['threshold']:.1%})")
if base and head:
    functions = [load(proof / f"both/{side}/instructions-functions.json") for side in ("main", "bench-inject-check")]
    print(read.diff_markdown(base, head, *functions))
EOF
pack
echo "gpu_instructions: $(cat "$proof/steps.txt" | wc -l) steps; $out/instructions.tar.gz"
