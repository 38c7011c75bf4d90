#!/usr/bin/env bash
# One driver call too many, to test the counts with (docs/guide.md, "counts"): branch bench-inject-call of a clone
# of cuda-python, one commit on BASE that makes cuda.core's Device.set_current call cuCtxGetCurrent once more,
# just before its cuCtxSetCurrent, and changes nothing else: `cuda-bench counts BASE bench-inject-call` must read
# "+1 cuCtxGetCurrent" in SetCurrent('core') alone, while its time stays within its threshold. Author, committer
# and dates are fixed, so the same BASE gives the same commit every time. It goes into the clone only.
#
#   scripts/inject_call.sh REPO [BASE]      # REPO: a clone, bare or not (e.g. .carry/cuda-python.git)
set -euo pipefail
repo=$1; base=${2:-main}
file=cuda_core/cuda/core/_device.pyx
export GIT_DIR; GIT_DIR=$(git -C "$repo" rev-parse --absolute-git-dir)
base_sha=$(git rev-parse --verify "$base^{commit}")
call='HANDLE_RETURN(cydriver.cuCtxSetCurrent(as_cu(h_context)))'
src=$(git show "$base_sha:$file")
[ "$(grep -cF "$call" <<<"$src")" = 1 ] || {
    echo "inject_call: $base's $file has no single '$call': write the extra call by hand" >&2
    exit 1
}
patched=$(awk -v call="$call" '
    { line = $0 }
    index(line, call) { match(line, /^ */); print substr(line, 1, RLENGTH) "cuda_bench_extra_call()" }
    { print line }
    END {
        print ""
        print ""
        print "cdef inline int cuda_bench_extra_call() except -1 nogil:"
        print "    cdef cydriver.CUcontext ctx"
        print "    HANDLE_RETURN(cydriver.cuCtxGetCurrent(&ctx))"
        print "    return 0"
    }' <<<"$src")
export GIT_INDEX_FILE; GIT_INDEX_FILE=$(mktemp); trap 'rm -f "$GIT_INDEX_FILE"' EXIT
git read-tree "$base_sha"
git update-index --cacheinfo "100644,$(git hash-object -w --stdin <<<"$patched"),$file"
export GIT_AUTHOR_NAME=cuda-python-bench GIT_AUTHOR_EMAIL=bench@invalid GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
commit=$(git commit-tree "$(git write-tree)" -p "$base_sha" \
    -m "bench: one more cuCtxGetCurrent in Device.set_current (a known change of work; never upstream)")
git update-ref "refs/heads/bench-inject-call" "$commit"
echo "inject_call: bench-inject-call = $(git rev-parse --short=9 "$commit") on $base ($(git rev-parse --short=9 "$base_sha"))"
