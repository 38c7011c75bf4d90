#!/usr/bin/env bash
# The one-pass window on a GPU machine without network (the carry of scripts/offline_carry.sh, with PREBUILT=... for
# the commits it measures), one part per call; what a part made goes to $OUT/window.tar.gz.
#
#   docs/evidence/one-pass-window/call.sh injected      # main's head and the five commits of bench-window-spin24
#                                                       # (scripts/inject_window.sh) in one pass, then the step 2 -> 3
#                                                       # of it alone, by the paired engine as `compare` runs it
#   docs/evidence/one-pass-window/call.sh aa            # main's head, comment 1 twice, comment 2: an A/A window
#   docs/evidence/one-pass-window/call.sh history REV ...   # `cuda-bench window REV ...` into results/
set -uo pipefail
cd "$(dirname "$0")/../../.."
part=$1; shift
out=${OUT:?OUT: the folder that comes back}
repo=.carry/cuda-python.git
run() { scripts/offline_run.sh .whl/common "$repo" /opt/torch/.venv/lib/python3.12/site-packages \
            "$out/run" "$@"; }
# main's head (the window's base) and bench-window-spin24's five commits, oldest first
mapfile -t spin < <(git -C "$repo" rev-list --reverse -6 bench-window-spin24)
status=0
case "$part" in
    injected)
        run window "${spin[@]}" --out .asv/proof/injected --no-counts || status=$?
        run compare "${spin[2]}" "${spin[3]}" --kind injected --no-counts --out .asv/proof/pairwise \
            --expected "bench_device.SetCurrent.time_set_current('core')" || status=$?
        ;;
    aa)
        run window "${spin[0]}" "${spin[1]}" "${spin[1]}" "${spin[2]}" --out .asv/proof/aa --no-counts || status=$?
        ;;
    history)
        run window "$@" || status=$?
        ;;
    *) echo "call.sh: the part is injected, aa or history, not '$part'" >&2; exit 2 ;;
esac
# the records and each step's summary; the worker logs too where something failed
logs=(--exclude=logs); [ "$status" -ne 0 ] && logs=()
tar -czf "$out/window.tar.gz" "${logs[@]}" $(ls -d .asv/proof .asv/windows .asv/counts 2>/dev/null)
exit "$status"
