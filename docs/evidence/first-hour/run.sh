#!/usr/bin/env bash
# A newcomer's first hour, README.md's commands as typed, on a fresh clone of this repository with a fresh $HOME,
# on a machine without a GPU: each command with its exit status and seconds, then what stayed in the temporary
# folder. Then the history damaged as it gets damaged (an impossible median, a results file of a commit
# commits.json lacks, a cut commits.json, a bad budgets.json5) and mended as the lines say, and the checkout
# copied with cp -a. cuda-python is not built whole: without a GPU, window and bisect build nothing, and run and
# asv continuous (which time what needs no GPU) are interrupted 40 s in, once they have said their first lines.
# Prints the transcript; summary.md says what it shows.
#
#   docs/evidence/first-hour/run.sh CUDA_PYTHON_CLONE > docs/evidence/first-hour/transcript.txt 2>&1
set -uo pipefail
cuda_python=$(cd "$1" && pwd)
here=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
scratch=$(mktemp -d)
export HOME="$scratch/home" TMPDIR="$scratch/tmp"
mkdir -p "$HOME" "$TMPDIR"
git clone -q "$here" "$scratch/cuda-python-bench"
cd "$scratch/cuda-python-bench"
echo "# $(date -u +%FT%TZ) $(uname -sr), $(nproc) cores, no GPU: $(command -v nvidia-smi >/dev/null && echo no || echo yes)"
echo "# this repository at $(git rev-parse --short=9 HEAD); cuda-python at $(git -C "$cuda_python" rev-parse --short=9 HEAD)"

step() {  # one command as a newcomer types it: its output's first and last lines, its exit status and seconds
    local start rc
    echo
    echo "\$ $*" | sed "s|$scratch|\$SCRATCH|g"
    start=$(date +%s)
    bash -c "$*" > "$scratch/out" 2>&1
    rc=$?
    if [ "$(wc -l < "$scratch/out")" -gt "${LINES_SHOWN:-12}" ]; then
        head -n 2 "$scratch/out"
        echo "[...]"
        tail -n "$(( ${LINES_SHOWN:-12} - 2 ))" "$scratch/out"
    else
        cat "$scratch/out"
    fi | sed "s|$scratch|\$SCRATCH|g" | cut -c1-400
    echo "[exit $rc in $(( $(date +%s) - start )) s]"
}

# the damage, as it happens to a history: a hand edit, a stray file, a write cut off
cat > "$scratch/damage.py" <<'EOF'
import json, math, shutil, sys
from pathlib import Path

head = next(Path("results/nvidia-h200").glob("cb56ab9f-*BINDINGSsource*.json"))
what = sys.argv[1]
if what == "impossible":  # SetCurrent's cuda.core and cuda.bindings medians: -5e-7 s and NaN beside its statistics
    data = json.loads(head.read_text())
    medians = data["results"]["bench_device.SetCurrent.time_set_current"][0]
    medians[0], medians[1] = -5e-7, math.nan
    head.write_text(json.dumps(data))
elif what == "stray":  # a results file of a commit results/commits.json does not hold, dated a day after the head
    data = json.loads(head.read_text())
    stray = head.with_name("ffffffff-" + head.name.split("-", 1)[1])
    stray.write_text(json.dumps(data | {"commit_hash": "f" * 40, "date": data["date"] + 86_400_000}))
elif what == "cut":  # commits.json cut off inside its first title
    path = Path("results/commits.json")
    text = path.read_text()
    path.write_text(text[: text.index('"title": "') + 15])
EOF

step ./scripts/bench --help
LINES_SHOWN=4 step "grep -n -m 3 '^\./scripts/' README.md"      # the first commands, within 25 lines
step 'source .venv/bin/activate && cuda-bench publish'         # the dashboard from results/, no clone, no network
step 'source .venv/bin/activate && cuda-bench report | head -6'
step "source .venv/bin/activate && cuda-bench init --repo $cuda_python"
step 'source .venv/bin/activate && cuda-bench window HEAD~2..HEAD'           # no GPU: one line, nothing built
step 'source .venv/bin/activate && cuda-bench bisect HEAD~8 HEAD -b SetCurrent'
step 'source .venv/bin/activate && timeout -s INT 40 cuda-bench run'         # its first line, then Ctrl-C in the build
step 'source .venv/bin/activate && timeout -s INT 40 asv continuous HEAD~1 HEAD'  # plain asv: the same first line
step 'du -sh .asv'

md="$scratch/report.md"  # the Markdown apart, so that the exit status shown is the command's
step "python3 $scratch/damage.py impossible && source .venv/bin/activate && cuda-bench report > $md; rc=\$?; head -5 $md; exit \$rc"
step "grep 'asv unreadable' $md | cut -c1-120"
step 'git checkout -- results/ && source .venv/bin/activate && cuda-bench report > /dev/null'
step "python3 $scratch/damage.py stray && source .venv/bin/activate && cuda-bench publish"
step 'rm results/nvidia-h200/ffffffff-* && source .venv/bin/activate && cuda-bench publish'
step "python3 $scratch/damage.py cut && source .venv/bin/activate && cuda-bench report > /dev/null"
step 'git checkout -- results/commits.json'
step "printf '{\\n  python_over_cpp: {\\n    default_ns: -5,\\n  }\\n}\\n' > budgets.json5 && source .venv/bin/activate && cuda-bench report > $md; rc=\$?; head -4 $md; exit \$rc"
step 'git checkout -- budgets.json5'
rm -f "$md"

# the checkout copied as people copy a project to try a change: the copy builds its own .venv and publishes into
# its own html/, the original's left as it was
step 'stat -c "%y %n" html/index.html && cp -a . ../copy && cd ../copy && ./scripts/bench publish && stat -c "%y %n" html/index.html ../cuda-python-bench/html/index.html'
rm -rf "$scratch/copy"

LINES_SHOWN=4 step ./scripts/test --fast

echo
echo "# left in the temporary folder (\$TMPDIR) after every command:"
find "$TMPDIR" -mindepth 1 -maxdepth 1 -exec du -sh {} + | sed "s|$TMPDIR|\$TMPDIR|" | sort -k2
echo "# (end; $(find "$TMPDIR" -mindepth 1 -maxdepth 1 | wc -l) entries)"
