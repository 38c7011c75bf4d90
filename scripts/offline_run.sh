#!/usr/bin/env bash
# cuda-bench on a GPU box with no network access.
#
#   scripts/offline_run.sh WHEELS REPO SYSTEM_SITE OUT [run] [asv range...]    # cuda-bench run
#   scripts/offline_run.sh WHEELS REPO SYSTEM_SITE OUT COMMAND [ARGS...]       # any other cuda-bench command
#
# e.g. compare BASE HEAD (the paired PR gate), aa COMMIT (thresholds), window REV ... (commits in one pass),
# bisect BASE HEAD -b CASE, ladder, over-cpp COMMIT, counts REV [REV], steps [--list], prebuild REV ...,
# plan --run --call-limit 600, report, publish, upgrade, init. Each command gets what it takes of REPO (--repo),
# SYSTEM_SITE (--system-site) and the CUPTI wheels (--cupti).
#
# WHEELS       folders of wheels, separated by ':': asv and its dependencies (pyproject.toml), asv_runner
#              0.2.5, the build requirements (Cython<3.3, setuptools-scm, pyclibrary, ...) and the
#              cuda-bindings wheel(s) the commits need (README "GPU boxes without network" has the pip
#              download commands)
# REPO         a clone of cuda-python (shallow is fine: scripts/shallow_clone.sh makes one with the tags)
# SYSTEM_SITE  a site-packages that has CuPy and numpy (reused, not reinstalled)
# OUT          where logs, the API table and a copy of results/ go
# CUPTI        (environment) a folder of the cupti-python and nvidia-cuda-cupti wheels that run, ladder, compare,
#              counts, window and plan count CUDA calls with (--cupti); default .whl/cupti where offline_carry.sh
#              made it
# CARRY        (environment) what offline_carry.sh made beside the wheels, default .carry: its wheels/ (prebuilt wheel
#              cache entries) and cuda-headers-*.tar.xz go into the cache the build looks in, on every call; its
#              valgrind.tar.xz is unpacked into /tmp/cuda-bench-valgrind, with which run, ladder, compare, counts,
#              window and plan count instructions per call (VALGRIND_LIB and CUDA_BENCH_VALGRIND set for the command)
# CUDA_BENCH_VENV  (environment) the tool's private venv, default /tmp/cuda-bench-venv: set up on a machine's first
#              call, reused by the next
#
# It installs the tool (this checkout, with its dependencies) into a private venv from WHEELS, checks that
# importing the suite does no CUDA work, tabulates what every benchmark resolves to in the system Python
# (python -m cuda_bench.run.apis), then runs cuda-bench's command with pip pointed at WHEELS only. results/ is saved to
# OUT when it ends, also when a step fails, and every 30 s while the command runs (SAVE_EVERY seconds), so a
# box that kills a command at its time limit still leaves what asv had written. Several calls on one
# machine set up once.
set -uo pipefail
# when the call began: plan --run --call-limit counts the call's time limit from here
export CUDA_BENCH_CALL_START=${CUDA_BENCH_CALL_START:-$(date +%s)}
wheels=$1; repo=$(realpath "$2"); site=$(realpath "$3"); out=$(realpath "$4"); shift 4
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# every cuda-bench command, and what it takes of REPO, SYSTEM_SITE and the CUPTI wheels (tests/test_offline.py
# checks this list against the command line's)
with_site="compare aa over-cpp counts window steps plan bisect"   # --repo --system-site
with_cupti="run ladder compare counts window plan"                   # --cupti, where there are wheels
repo_only="init prebuild publish"                                    # --repo
alone="report upgrade serve"                                         # as given
command=run
case " run ladder $with_site $repo_only $alone " in  # anything else is run's asv range
    *" ${1:-run} "*) command=${1:-run}; [ $# -gt 0 ] && shift ;;
esac
if [ "$command" = run ]; then args=("${@:-HEAD^!}"); else args=("$@"); fi
cupti=()
case " $with_cupti " in *" $command "*)
    dir=${CUPTI:-$here/.whl/cupti}
    if compgen -G "$dir/*.whl" >/dev/null; then cupti=(--cupti "$(realpath "$dir")"); fi ;;
esac
case "$command" in
    prebuild) exec_args=(prebuild --repo "$repo" --logs "$out/prebuild" "${args[@]}") ;;
    run|ladder) exec_args=("$command" --repo "$repo" --system-site "$site" --no-publish "${cupti[@]}" "${args[@]}") ;;
    init|publish) exec_args=("$command" --repo "$repo" "${args[@]}") ;;
    *) case " $alone " in
           *" $command "*) exec_args=("$command" "${args[@]}") ;;
           *) exec_args=("$command" --repo "$repo" --system-site "$site" "${cupti[@]}" "${args[@]}") ;;
       esac ;;
esac
if [ -n "${CUDA_BENCH_DRY_RUN:-}" ]; then printf '%s\n' "${exec_args[@]}"; exit 0; fi  # the command, not run
mkdir -p "$out"
links=""; for dir in ${wheels//:/ }; do links="$links $(realpath "$dir")"; done
export PYTHONUNBUFFERED=1 PIP_NO_INDEX=1 PIP_FIND_LINKS="${links# }" PIP_DISABLE_PIP_VERSION_CHECK=1
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
venv=${CUDA_BENCH_VENV:-/tmp/cuda-bench-venv}  # the tool's private venv, set up once a machine

save() {  # written aside and renamed: OUT never holds half an archive
    local part="$out/.results.$BASHPID.tar.gz"
    tar -czf "$part" results && mv -f "$part" "$out/results.tar.gz"
}
saver=""
finish() {
    [ -n "$saver" ] && kill "$saver" 2>/dev/null
    save && echo "offline_run: results/ saved to $out/results.tar.gz"
}
trap finish EXIT

step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

if [ ! -e "$venv/.offline-run-ready" ]; then
step "machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv
python3 --version; nproc

step "the tool into $venv, from $PIP_FIND_LINKS"
python3 -m venv "$venv" && "$venv/bin/pip" install -q "$here" "importlib-metadata<8.8" || exit 1
"$venv/bin/python" -m asv --version

step "importing the suite does no CUDA work"
python3 - <<'EOF' || exit 1
from cuda_bench.foundations.suite import cases
found = cases()
from cuda.bindings import driver
err, _ = driver.cuCtxGetCurrent()
# importing CuPy maps libcuda.so, but nothing may initialise the driver or create a context
assert err == driver.CUresult.CUDA_ERROR_NOT_INITIALIZED, f"the driver was initialised at import ({err!r})"
print(f"ok: {len(found)} cases imported; CUDA driver not initialised")
EOF

step "what every benchmark resolves to (system Python)"
python3 -m cuda_bench.run.apis --json "$out/apis.json" > "$out/apis.txt" 2>&1; tail -3 "$out/apis.txt"
touch "$venv/.offline-run-ready"
fi

carry=${CARRY:-$here/.carry}
cache=${CUDA_BENCH_CACHE:-$HOME/.cache/cuda-python-bench/wheels}
if [ -d "$carry/wheels" ]; then
    step "prebuilt wheels from $carry/wheels -> $cache"
    mkdir -p "$cache" && cp -rn "$carry/wheels/." "$cache/" && echo "$(ls -d "$cache"/*/*/ | wc -l) cache entries"
fi
for headers in "$carry"/cuda-headers-*.tar.xz; do
    [ -f "$headers" ] || continue
    version=$(basename "$headers" .tar.xz); dest="$(dirname "$cache")/$version"
    step "CUDA headers $headers -> $dest"
    mkdir -p "$dest" && tar -xJf "$headers" -C "$dest"
done

if [ -f "$carry/valgrind.tar.xz" ]; then
    valgrind=/tmp/cuda-bench-valgrind
    if [ ! -x "$valgrind/usr/bin/valgrind" ]; then
        step "valgrind $carry/valgrind.tar.xz -> $valgrind"
        mkdir -p "$valgrind" && tar -xJf "$carry/valgrind.tar.xz" -C "$valgrind"
    fi
    export VALGRIND_LIB="$valgrind/usr/libexec/valgrind" CUDA_BENCH_VALGRIND="$valgrind/usr/bin/valgrind"
    "$CUDA_BENCH_VALGRIND" --version
fi

step "cuda-bench ${exec_args[*]}"
( while sleep "${SAVE_EVERY:-30}" && kill -0 $$ 2>/dev/null; do save 2>/dev/null; done ) &  # ends with this script
saver=$!
# A time limit (the device's, timeout(1)) or Ctrl-C signals the whole process group. cuda-bench stops on it and
# writes what it measured; tee ignores it, so that what cuda-bench says after it reaches the log and not a closed
# pipe, and this script waits for cuda-bench (not for every process that holds the log open) before it saves
# results/.
trap 'echo "offline_run: signal received: cuda-bench has stopped" >&2' INT TERM
"$venv/bin/cuda-bench" "${exec_args[@]}" > >(trap '' INT TERM; exec tee -a "$out/bench.log") 2>&1
status=$?
logger=$!
for _ in $(seq 50); do kill -0 "$logger" 2>/dev/null || break; sleep 0.1; done  # its last lines, 5 s at most
echo "offline_run: cuda-bench $command exited $status"
exit "$status"
