#!/usr/bin/env bash
# A slowdown spread over commits, none slow enough alone, to test the bisect with (docs/method.md, rule 17):
# branch bench-spread-spinN of a clone of cuda-python, five commits on BASE, commit k holding
# scripts/inject_spin.sh's spin of k*N turns in Device.set_current, so that each commit adds N turns. With N small
# enough that no step flags SetCurrent('core') alone (24 turns read ×1.042 on the H100, so 4 turns are about 0.7 % a
# step), BASE against HEAD reads about five times that, and the bisect must answer "spread":
#
#   scripts/inject_spread.sh REPO N [BASE]                       # REPO: a clone, bare or not
#   cuda-bench bisect BASE bench-spread-spinN -b '^bench_device\.SetCurrent\.'
#
# Author, committer and dates are fixed, so the same BASE and N give the same commits every time. It goes into the
# clone only, never to cuda-python.
set -euo pipefail
repo=$1; n=$2; base=${3:-main}
here=$(cd "$(dirname "$0")" && pwd)
export GIT_DIR; GIT_DIR=$(git -C "$repo" rev-parse --absolute-git-dir)
export GIT_AUTHOR_NAME=cuda-python-bench GIT_AUTHOR_EMAIL=bench@invalid GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
base_sha=$(git rev-parse --verify "$base^{commit}")
parent=$base_sha
for k in 1 2 3 4 5; do  # the tree of BASE with k*N turns, on the commit before
    "$here/inject_spin.sh" "$repo" $((k * n)) "$base_sha" >/dev/null
    tree=$(git rev-parse "bench-inject-spin$((k * n))^{tree}")
    git update-ref -d "refs/heads/bench-inject-spin$((k * n))"
    parent=$(git commit-tree "$tree" -p "$parent" \
        -m "bench: spin $((k * n)) turns in Device.set_current, $n more (a spread slowdown; never upstream)")
done
git update-ref "refs/heads/bench-spread-spin$n" "$parent"
echo "inject_spread: bench-spread-spin$n = $(git rev-parse --short=9 "$parent") on $base ($(git rev-parse --short=9 "$base_sha")):"
git log --format='  %h %s' "$base_sha..$parent"
