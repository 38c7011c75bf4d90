#!/usr/bin/env bash
# A known slowdown to test the method with (docs/method.md): branch bench-inject-spinN of a clone of
# cuda-python, one commit on BASE that adds a fixed spin of N turns to cuda.core's Device.set_current, just
# before its cuCtxSetCurrent, and changes nothing else. Author, committer and dates are fixed, so the same
# BASE and N give the same commit every time. It goes into the clone only, never to cuda-python.
#
# KIND c (the default): a C loop of N turns, time and no work the counts can see (no call).
# KIND python: branch bench-inject-pyspinN, N calls of a Python function that does nothing: slower, and the
# counts read "+N Python calls" in SetCurrent('core') alone (docs/guide.md, "counts").
#
#   scripts/inject_spin.sh REPO N [BASE] [KIND]      # REPO: a clone, bare or not (e.g. .carry/cuda-python.git)
set -euo pipefail
repo=$1; n=$2; base=${3:-main}; kind=${4:-c}
case "$kind" in c|python) ;; *) echo "inject_spin: KIND is c or python, not '$kind'" >&2; exit 2 ;; esac
file=cuda_core/cuda/core/_device.pyx
export GIT_DIR; GIT_DIR=$(git -C "$repo" rev-parse --absolute-git-dir)
base_sha=$(git rev-parse --verify "$base^{commit}")
call='HANDLE_RETURN(cydriver.cuCtxSetCurrent(as_cu(h_context)))'
src=$(git show "$base_sha:$file")
grep -q "^cimport cpython$" <<<"$src" && [ "$(grep -cF "$call" <<<"$src")" = 1 ] || {
    echo "inject_spin: $base's $file has no single '$call' after 'cimport cpython': write the spin by hand" >&2
    exit 1
}
if [ "$kind" = python ]; then
grep -B1 -F "$call" <<<"$src" | head -1 | grep -q "^ *with nogil:$" || {
    echo "inject_spin: $base's '$call' is not alone in a 'with nogil:' block: write the Python spin by hand" >&2
    exit 1
}
patched=$(awk -v n="$n" -v call="$call" '
    { line = $0 }
    index(line, call) {
        match(line, /^ */); pad = substr(line, 1, RLENGTH)
        print pad "with gil:"
        print pad "    cuda_bench_py_spin(" n ")"
    }
    { print line }
    line == "cimport cpython" {
        print ""
        print "_cuda_bench_noop = eval(\"lambda: None\")  # a Python function: each call is one Python call"
        print ""
        print ""
        print "cdef void cuda_bench_py_spin(int n):"
        print "    for _ in range(n):"
        print "        _cuda_bench_noop()"
    }' <<<"$src")
branch=bench-inject-pyspin$n; what="$n calls of a Python no-op in Device.set_current before cuCtxSetCurrent"
else
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
branch=bench-inject-spin$n; what="spin $n turns in Device.set_current before cuCtxSetCurrent"
fi
export GIT_INDEX_FILE; GIT_INDEX_FILE=$(mktemp); trap 'rm -f "$GIT_INDEX_FILE"' EXIT
git read-tree "$base_sha"
git update-index --cacheinfo "100644,$(git hash-object -w --stdin <<<"$patched"),$file"
export GIT_AUTHOR_NAME=cuda-python-bench GIT_AUTHOR_EMAIL=bench@invalid GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
commit=$(git commit-tree "$(git write-tree)" -p "$base_sha" -m "bench: $what (a known slowdown; never upstream)")
git update-ref "refs/heads/$branch" "$commit"
echo "inject_spin: $branch = $(git rev-parse --short=9 "$commit")" \
     "on $base ($(git rev-parse --short=9 "$base_sha"))"
