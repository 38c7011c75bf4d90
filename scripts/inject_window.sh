#!/usr/bin/env bash
# A window with a known slowdown in its middle, to test the one-pass window with (docs/method.md, "One pass per
# window"): branch bench-window-spinN of a clone of cuda-python, five commits on BASE:
#
#   1, 2   a comment line added to a pure-Python module of cuda_core (a new cuda_core wheel, the same compiled code)
#   3      scripts/inject_spin.sh's spin of N turns in Device.set_current (the only change of code)
#   4, 5   a comment line again
#
# so that the window BASE 1 2 3 4 5 must flag SetCurrent('core') at the step 2 -> 3 and nothing anywhere else. The
# comments go into a .py file, never a .pyx one: a rebuilt extension can move by itself (docs/method.md, rule 4),
# and this window tests the window, not that. Author, committer and dates are fixed, so the same BASE and N give the
# same commits every time. It goes into the clone only, never to cuda-python.
#
#   scripts/inject_window.sh REPO N [BASE]      # REPO: a clone, bare or not (e.g. .carry/cuda-python.git)
set -euo pipefail
repo=$1; n=$2; base=${3:-main}
here=$(cd "$(dirname "$0")" && pwd)
file=cuda_core/cuda/core/_utils/__init__.py
export GIT_DIR; GIT_DIR=$(git -C "$repo" rev-parse --absolute-git-dir)
export GIT_AUTHOR_NAME=cuda-python-bench GIT_AUTHOR_EMAIL=bench@invalid GIT_AUTHOR_DATE="2026-01-01T00:00:00Z"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE

comment() {  # comment PARENT K: PARENT with one comment line added to $file; prints the new commit
    local parent=$1 k=$2 index
    index=$(mktemp); trap 'rm -f "$index"' RETURN
    GIT_INDEX_FILE=$index git read-tree "$parent"
    local text; text=$(git show "$parent:$file"; echo "# bench-window: comment $k (no code; never upstream)")
    GIT_INDEX_FILE=$index git update-index --cacheinfo "100644,$(git hash-object -w --stdin <<<"$text"),$file"
    git commit-tree "$(GIT_INDEX_FILE=$index git write-tree)" -p "$parent" \
        -m "bench: comment $k in $file (no code; never upstream)"
}

base_sha=$(git rev-parse --verify "$base^{commit}")
git cat-file -e "$base_sha:$file" || { echo "inject_window: $base has no $file" >&2; exit 1; }
one=$(comment "$base_sha" 1)
two=$(comment "$one" 2)
git update-ref refs/heads/bench-window-base "$two"
"$here/inject_spin.sh" "$repo" "$n" bench-window-base >/dev/null
three=$(git rev-parse "bench-inject-spin$n")
git update-ref -d refs/heads/bench-window-base
four=$(comment "$three" 4)
five=$(comment "$four" 5)
git update-ref "refs/heads/bench-window-spin$n" "$five"
echo "inject_window: bench-window-spin$n = $(git rev-parse --short=9 "$five") on $base ($(git rev-parse --short=9 "$base_sha")):"
for c in "$base_sha" "$one" "$two" "$three" "$four" "$five"; do
    echo "  $(git rev-parse --short=9 "$c") $(git log -1 --format=%s "$c")"
done
