#!/usr/bin/env bash
# Run the suite on a GPU box with no network access.
#
#   scripts/offline_run.sh WHEELS REPO SYSTEM_SITE OUT [asv range...]          # scripts/bench run
#   scripts/offline_run.sh WHEELS REPO SYSTEM_SITE OUT compare BASE HEAD [...]  # scripts/bench compare
#   scripts/offline_run.sh WHEELS REPO SYSTEM_SITE OUT ladder [...]             # scripts/bench ladder
#   scripts/offline_run.sh WHEELS REPO SYSTEM_SITE OUT aa COMMIT [...]          # scripts/bench aa
#   scripts/offline_run.sh WHEELS REPO SYSTEM_SITE OUT prebuild REV [REV ...]   # fill the wheel cache
#
# WHEELS       a folder of wheels: asv and its dependencies, asv_runner 0.2.5, the build requirements
#              (Cython<3.3, setuptools-scm, ...) and the cuda-bindings wheel named by CUDA_BENCH_BINDINGS
#              (see README "Offline GPU boxes" for the pip download command that fills it)
# REPO         a clone of cuda-python (shallow is fine: scripts/shallow_clone.sh makes one with the tags)
# SYSTEM_SITE  a site-packages that has CuPy and numpy (reused, not reinstalled)
# OUT          where logs, the API table and a copy of results/ go
#
# It installs asv into a private venv from WHEELS, checks that importing the suite does no CUDA work,
# tabulates what every benchmark resolves to in the system Python (scripts/apis.py), then runs
# scripts/bench.py with pip pointed at WHEELS only. results/ and measurements/ are copied to OUT even when
# a step fails. Several calls in one session (prebuild, then aa, then ladder ...) set up only once.
set -uo pipefail
wheels=$(realpath "$1"); repo=$(realpath "$2"); site=$(realpath "$3"); out=$(realpath "$4"); shift 4
command=run
case "${1:-}" in compare|ladder|aa|prebuild) command=$1; shift ;; esac
if [ "$command" = run ]; then args=("${@:-HEAD^!}"); else args=("$@"); fi
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels" PIP_DISABLE_PIP_VERSION_CHECK=1
export CUDA_BENCH_BINDINGS=${CUDA_BENCH_BINDINGS:-13.3.1}
[ "$command" = ladder ] && export CUDA_BENCH_BINDINGS=${CUDA_BENCH_LADDER_BINDINGS:-auto}

save() {
    tar -czf "$out/results.tar.gz" results $(ls -d measurements 2>/dev/null)
    echo "offline_run: results/ and measurements/ saved to $out/results.tar.gz"
}
trap save EXIT

step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

if [ ! -e /tmp/asv-venv/.offline-run-ready ]; then
step "machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv
python3 --version; nproc

step "asv into a private venv, from $wheels"
python3 -m venv /tmp/asv-venv && /tmp/asv-venv/bin/pip install -q asv==0.6.6 "importlib-metadata<8.8" || exit 1
/tmp/asv-venv/bin/python -m asv --version

step "importing the suite does no CUDA work"
python3 - <<'EOF' || exit 1
import importlib, pkgutil, benchmarks
for m in pkgutil.iter_modules(benchmarks.__path__):
    importlib.import_module(f"benchmarks.{m.name}")
from cuda.bindings import driver
err, _ = driver.cuCtxGetCurrent()
# importing CuPy maps libcuda.so, but nothing may initialise the driver or create a context
assert err == driver.CUresult.CUDA_ERROR_NOT_INITIALIZED, f"the driver was initialised at import ({err!r})"
print("ok: all benchmark modules imported; CUDA driver not initialised")
EOF

step "what every benchmark resolves to (system Python)"
python3 scripts/apis.py --json "$out/apis.json" | tee "$out/apis.txt"
touch /tmp/asv-venv/.offline-run-ready
fi

if [ "$command" = prebuild ]; then
    step "prebuild ${args[*]}"
    /tmp/asv-venv/bin/python scripts/build_cuda_python.py prebuild "$repo" "${args[@]}" \
        --parallel "${CUDA_BENCH_PREBUILD_PARALLEL:-4}" --logs "$out/prebuild" 2>&1 | tee -a "$out/prebuild.log"
    exit "${PIPESTATUS[0]}"
fi

step "scripts/bench $command ${args[*]}"
case "$command" in
    run|ladder) args=(--no-publish "${args[@]}") ;;
    aa) ;;
    compare) args=(--output "$out/compare.md" "${args[@]}") ;;
esac
/tmp/asv-venv/bin/python scripts/bench.py "$command" --repo "$repo" --system-site "$site" \
    --bindings "$CUDA_BENCH_BINDINGS" "${args[@]}" 2>&1 | tee -a "$out/asv.log"
status=${PIPESTATUS[0]}
echo "offline_run: scripts/bench $command exited $status"
exit "$status"
