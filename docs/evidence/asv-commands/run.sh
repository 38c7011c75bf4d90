#!/usr/bin/env bash
# The design's commands as a user types them, on a machine without a GPU, with a local clone of cuda-python:
#   docs/evidence/asv-commands/run.sh > docs/evidence/asv-commands/output.txt   (from the project root)
cd "$(dirname "$0")/../../.."
clone=${CLONE:-/tmp/cuda-python-clone}  # a clone of cuda-python (or a fork with its main)
export PATH=$PWD/.venv/bin:$PATH
t0=$(date +%s)
say() { echo; echo "\$ $*"; }
results_before=$(git status --porcelain results/ | wc -l); sum_before=$(find results -type f -exec md5sum {} + | sort | md5sum)
say cuda-bench init --repo $clone; cuda-bench init --repo $clone 2>&1; echo "[exit $?]"
say asv run HEAD~3..HEAD -b ResultFromValue -b LaunchConfigCreate; asv run HEAD~3..HEAD -b ResultFromValue -b LaunchConfigCreate 2>&1 | tail -40; echo "[exit ${PIPESTATUS[0]}] at $(( $(date +%s) - t0 )) s"
say "asv run HEAD^! -b ResultFromValue -b LaunchConfigCreate   # built and measured first above, other commits installed since: reinstalled from asv's build cache"; asv run "HEAD^!" -b ResultFromValue -b LaunchConfigCreate 2>&1 | tail -25; echo "[exit ${PIPESTATUS[0]}] at $(( $(date +%s) - t0 )) s"
say "what the environment holds after the reinstall"; for py in .asv/env/*/bin/python; do $py -c "import importlib.metadata as m; print(*(f'{d} {m.version(d)}' for d in ('cuda-core', 'cuda-bindings', 'cuda-pathfinder')), sep=', ')"; done
say asv continuous HEAD~1 HEAD -b ResultFromValue -b LaunchConfigCreate; asv continuous HEAD~1 HEAD -b ResultFromValue -b LaunchConfigCreate 2>&1 | tail -25; echo "[exit ${PIPESTATUS[0]}] at $(( $(date +%s) - t0 )) s"
say asv continuous HEAD~1 HEAD -b SetCurrent   "# every case skipped here: no GPU"; asv continuous HEAD~1 HEAD -b SetCurrent 2>&1 | tail -12; echo "[exit ${PIPESTATUS[0]}]"
say "cuda-bench run mian"; cuda-bench run mian 2>&1 | tail -3; echo "[exit ${PIPESTATUS[0]}]"
say "cuda-bench run deadbeef^!"; cuda-bench run 'deadbeef^!' 2>&1 | tail -3; echo "[exit ${PIPESTATUS[0]}]"
say "ls .asv/results-no-gpu/*/"; ls .asv/results-no-gpu/*/
say asv publish; asv publish 2>&1 | tail -5; echo "[exit ${PIPESTATUS[0]}]"
sum_after=$(find results -type f -exec md5sum {} + | sort | md5sum)
echo "html/README.md: $(git status --porcelain html/README.md | wc -l) changes; html/index.html: $(head -c 300 html/index.html | grep -o "<title>[^<]*</title>")"
echo; echo "results/ before and after: $([ "$sum_before" = "$sum_after" ] && echo identical || echo CHANGED); git status results/: $(git status --porcelain results/ | wc -l) changes ($results_before before)"
echo "total $(( $(date +%s) - t0 )) s"
