#!/usr/bin/env bash
# A small bare clone of cuda-python for a GPU box without network: main's newest DEPTH commits and every
# cuda-core-v* release tag (one commit each, no history), enough for `scripts/bench run`, `compare` and
# `ladder`. About 5 MB for main (depth 8) and every release tag, packed.
#
#   scripts/shallow_clone.sh SOURCE DEST [DEPTH]     # SOURCE: a URL or a local clone of cuda-python
set -euo pipefail
source=$1; dest=$2; depth=${3:-8}
git init -q --bare "$dest"
git -C "$dest" symbolic-ref HEAD refs/heads/main  # HEAD^! (offline_run's default) is main's head
git -C "$dest" fetch -q --depth "$depth" "$source" "refs/heads/main:refs/heads/main"
for tag in $(git ls-remote --tags --refs "$source" 'cuda-core-v*' | awk '{print $2}'); do
    case "$tag" in *rc*) continue ;; esac  # releases only, as cuda_bench.foundations.names.is_release_tag
    git -C "$dest" fetch -q --depth 1 "$source" "$tag:$tag"
done
git -C "$dest" gc -q --aggressive --prune=now  # one pack: 15 MB -> 5 MB for main (depth 8) and every tag
echo "shallow_clone: $dest: main ($depth commits) and $(git -C "$dest" tag | wc -l) release tags, $(du -sh "$dest" | cut -f1)"
