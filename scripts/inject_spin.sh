#!/usr/bin/env bash
# A known slowdown to test the method with (docs/method.md): branch bench-inject-spinN of a clone of
# cuda-python, one commit on BASE that adds a fixed spin of N turns to cuda.core's Device.set_current, just
# before its cuCtxSetCurrent, and changes nothing else. Author, committer and dates are fixed, so the same
# BASE and N give the same commit every time. It goes into the clone only, never to cuda-python.
#
#   scripts/inject_spin.sh REPO N [BASE]      # REPO: a clone, bare or not (e.g. .carry/cuda-python.git)
set -euo pipefail
repo=$1; n=$2; base=${3:-main}
file=cuda_core/cuda/core/_device.pyx
export GIT_DIR; GIT_DIR=$(git -C "$repo" rev-parse --absolute-git-dir)
base_sha=$(git rev-parse --verify "$base^{commit}")
call='HANDLE_RETURN(cydriver.cuCtxSetCurrent(as_cu(h_context)))'
src=$(git show "$base_sha:$file")
grep -q "^cimport cpython$" <<<"$src" && [ "$(grep -cF "$call" <<<"$src")" = 1 ] || {
    echo "inject_spin: $base's $file has no single '$call' after 'cimport cpython': write the spin by hand" >&2
    exit 1
}
patched=$(awk -v n="$n" -v call="$call" '
    { line = $0 }
    index(line, call) { match(line, /^ */); print substr(line, 1, RLENGTH) "cuda_bench_spin(" n ")" }
    { print line }
    line == "cimport cpython" {
        print ""
        print "cdef extern from *:"
        print "    \"\"\""
        print "    static inline void cuda_bench_spin(int n) { for (volatile int i = 0; i < n; ++i) {} }"
        print "    \"\"\""
        print "    void cuda_bench_spin(int n) nogil"
    }' <<<"$src")
export GIT_INDEX_FILE; GIT_INDEX_FILE=$(mktemp); trap 'rm -f "$GIT_INDEX_FILE"' EXIT
git read-tree "$base_sha"
git update-index --cacheinfo "100644,$(git hash-object -w --stdin <<<"$patched"),$file"
export GIT_AUTHOR_NAME=cuda-python-bench GIT_AUTHOR_EMAIL=bench@invalid GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
commit=$(git commit-tree "$(git write-tree)" -p "$base_sha" \
    -m "bench: spin $n turns in Device.set_current before cuCtxSetCurrent (a known slowdown; never upstream)")
git update-ref "refs/heads/bench-inject-spin$n" "$commit"
echo "inject_spin: bench-inject-spin$n = $(git rev-parse --short=9 "$commit")" \
     "on $base ($(git rev-parse --short=9 "$base_sha"))"
