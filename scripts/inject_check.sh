#!/usr/bin/env bash
# A known change of work inside compiled code, to test the instruction counts with (docs/method.md,
# "Instructions per call"): branch bench-inject-check of a clone of cuda-python, one commit on BASE that adds
# one extra validation to cuda.core's LaunchConfig.__init__ (_launch_config.pyx), right after the block is
# cast: every grid and block dimension converted to a C integer and checked positive, and the block's threads
# multiplied out and checked against 1024. It runs inside the method's own compiled code and calls nothing that
# Python, CUPTI or the NVRTC module see, so the work counts read the same and only the instructions (and the
# time) of LaunchConfigCreate('core') move. Author, committer and dates are fixed: the same BASE gives the same
# commit every time. It goes into the clone only, never to cuda-python.
#
#   scripts/inject_check.sh REPO [BASE]      # REPO: a clone, bare or not (e.g. .carry/cuda-python.git)
set -euo pipefail
repo=$1; base=${2:-main}
file=cuda_core/cuda/core/_launch_config.pyx
export GIT_DIR; GIT_DIR=$(git -C "$repo" rev-parse --absolute-git-dir)
base_sha=$(git rev-parse --verify "$base^{commit}")
cast='self.block = cast_to_3_tuple("LaunchConfig.block", block)'
src=$(git show "$base_sha:$file")
[ "$(grep -cF "$cast" <<<"$src")" = 1 ] || {
    echo "inject_check: $base's $file has no single '$cast': write the validation by hand" >&2
    exit 1
}
patched=$(awk -v cast="$cast" '
    { print }
    index($0, cast) {
        match($0, /^ */); pad = substr($0, 1, RLENGTH)
        print pad "# cuda-bench: one extra validation, in the method itself (no call Python can see)"
        print pad "cdef int cuda_bench_i"
        print pad "for cuda_bench_i in range(3):"
        print pad "    if <long long>self.grid[cuda_bench_i] <= 0 or <long long>self.block[cuda_bench_i] <= 0:"
        print pad "        raise ValueError(\"LaunchConfig: grid and block dimensions must be positive\")"
        print pad "if <long long>self.block[0] * <long long>self.block[1] * <long long>self.block[2] > 1024:"
        print pad "    raise ValueError(\"LaunchConfig.block: more than 1024 threads per block\")"
    }' <<<"$src")
branch=bench-inject-check
export GIT_INDEX_FILE; GIT_INDEX_FILE=$(mktemp); trap 'rm -f "$GIT_INDEX_FILE"' EXIT
git read-tree "$base_sha"
git update-index --cacheinfo "100644,$(git hash-object -w --stdin <<<"$patched"),$file"
export GIT_AUTHOR_NAME=cuda-python-bench GIT_AUTHOR_EMAIL=bench@invalid GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
commit=$(git commit-tree "$(git write-tree)" -p "$base_sha" \
    -m "bench: one extra validation in LaunchConfig.__init__ (a known change of compiled work; never upstream)")
git update-ref "refs/heads/$branch" "$commit"
echo "inject_check: $branch = $(git rev-parse --short=9 "$commit") on $base ($(git rev-parse --short=9 "$base_sha"))"
