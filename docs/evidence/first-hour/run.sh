#!/usr/bin/env bash
# A newcomer's first hour, README.md's commands as typed, on a fresh clone of this repository with a fresh $HOME,
# on a machine without a GPU: each command with its exit status and seconds, then what stayed in the temporary
# folder. Prints the transcript; summary.md says what it shows.
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

step() {  # one command as a newcomer types it: its output's last lines, its exit status and seconds
    local start rc
    echo
    echo "\$ $*"
    start=$(date +%s)
    bash -c "$*" > "$scratch/out" 2>&1
    rc=$?
    tail -n "${LINES_SHOWN:-12}" "$scratch/out" | cut -c1-200
    echo "[exit $rc in $(( $(date +%s) - start )) s]"
}

step ./scripts/bench --help
step 'cuda-bench --help'                                  # not on PATH until .venv is activated
step 'source .venv/bin/activate && cuda-bench report --issue | head -5'
step 'source .venv/bin/activate && cuda-bench publish'   # the dashboard from results/, no clone, no network
step 'source .venv/bin/activate && cuda-bench report | head -8'
step 'source .venv/bin/activate && cuda-bench run'       # no clone set yet: one line, pointing to the guide
step "source .venv/bin/activate && cuda-bench init --repo $cuda_python"
step 'source .venv/bin/activate && cuda-bench plan | head -8'
step 'source .venv/bin/activate && timeout -s INT 90 cuda-bench run'  # Ctrl-C while the commit builds
LINES_SHOWN=20 step 'source .venv/bin/activate && cuda-bench run'  # main's newest commit: built, asv, published
LINES_SHOWN=20 step 'source .venv/bin/activate && cuda-bench compare main~1 main'
step 'source .venv/bin/activate && asv publish'
LINES_SHOWN=4 step ./scripts/test --fast

echo
echo "# left in the temporary folder (\$TMPDIR) after every command:"
find "$TMPDIR" -mindepth 1 -maxdepth 1 -exec du -sh {} + | sed "s|$TMPDIR|\$TMPDIR|" | sort -k2
echo "# (end; $(find "$TMPDIR" -mindepth 1 -maxdepth 1 | wc -l) entries)"
