#!/usr/bin/env bash
# Session 20, run here before call 7 (not on the GPU): branch bench-pathfinder-1.9.1 of the carried clone, one
# commit on main whose cuda_pathfinder/cuda/pathfinder/ is the cuda-pathfinder 1.9.1 wheel's cuda/pathfinder/
# (pure Python; the wheel beside 0.5.1 in the release step) and nothing else changed. Author, committer and
# dates fixed, so the same inputs give the same commit. Into the clone only, never to cuda-python.
#   bash pathfinder_branch.sh .carry/cuda-python.git .whl/cu13/cuda_pathfinder-1.9.1-py3-none-any.whl
set -euo pipefail
export GIT_DIR; GIT_DIR=$(git -C "$1" rev-parse --absolute-git-dir); wheel=$(realpath "$2")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 -m zipfile -e "$wheel" "$tmp/wheel"
export GIT_INDEX_FILE=$tmp/index
git read-tree main
git rm -rq --cached cuda_pathfinder/cuda/pathfinder
(cd "$tmp/wheel" && find cuda/pathfinder -type f ! -name '*.pyc' | sort | while read -r f; do
  git update-index --add --cacheinfo 100644,"$(git hash-object -w "$f")",cuda_pathfinder/"$f"
done)
export GIT_AUTHOR_NAME=cuda-python-bench GIT_AUTHOR_EMAIL=bench@example.invalid GIT_AUTHOR_DATE="2026-07-24T00:00:00Z"
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL GIT_COMMITTER_DATE=$GIT_AUTHOR_DATE
commit=$(git commit-tree "$(git write-tree)" -p main -m "bench: cuda_pathfinder's package replaced by cuda-pathfinder 1.9.1's")
git update-ref refs/heads/bench-pathfinder-1.9.1 "$commit"
git diff --stat main "$commit" | tail -1; echo "bench-pathfinder-1.9.1 $commit"
