#!/usr/bin/env bash
# A fresh clone, and the committed history broken four ways: each gives a named line, its exit status and pages
# that say so. Needs no GPU; the first step installs the package (network), everything after runs without it.
#
#   docs/evidence/broken-records/run.sh [WORK_DIR]     (writes the transcript to standard output)
set -uo pipefail
src=$(cd "$(dirname "$0")/../../.." && pwd)
work=${1:-$(mktemp -d)}
export HOME="$work/home"; mkdir -p "$HOME"
clone="$work/clone"
say() { printf '\n$ %s\n' "$*"; }
run() { say "$*"; "$@" 2>&1 | grep -v '^installing\|^bench: machine' | tail -"${LINES_SHOWN:-6}"; echo "exit status ${PIPESTATUS[0]}"; }

git clone -q "$src" "$clone" && cd "$clone" || exit 3
./scripts/bench --help >/dev/null 2>&1   # the package into .venv (the one step with network)
echo "a fresh clone of $(git rev-parse --short HEAD), the package installed"

echo; echo "## 1. publish on a fresh clone without network"
run unshare -n ./scripts/bench publish
ls html/index.html html/releases.html html/glossary.html

echo; echo "## 2. a line of steps.jsonl cut in half"
cp -r results "$work/cut-step"
f="$work/cut-step/nvidia-h200/steps.jsonl"
n=$(grep -n '"rechecks"\|"command": "cuda-bench steps --recheck' "$f" | head -1 | cut -d: -f1); n=${n:-3}
python3 - "$f" "$n" <<'PY'
import sys; p, n = sys.argv[1], int(sys.argv[2]); lines = open(p).read().splitlines(True)
lines[n - 1] = lines[n - 1][: len(lines[n - 1]) // 2] + "\n"; open(p, "w").write("".join(lines))
PY
echo "cut: line $n of nvidia-h200/steps.jsonl"
run ./scripts/bench report --issue --results "$work/cut-step"
run ./scripts/bench publish --results-dir "$work/cut-step"
grep -o '<div class="[^"]*unreadable[^"]*"[^<]*<[^>]*>[^<]*' html/index.html | head -2

echo; echo "## 3. the results file of main's head cut"
cp -r results "$work/cut-head"
for head_file in "$work"/cut-head/nvidia-h200/cb56ab9f-*.json; do  # each environment's run of the head
    python3 -c "import sys; p=sys.argv[1]; s=open(p).read(); open(p,'w').write(s[:len(s)//3])" "$head_file"
    echo "cut: $(basename "$head_file")"
done
say "./scripts/bench report --results $work/cut-head"
./scripts/bench report --results "$work/cut-head" 2>&1 | grep -A3 "^## nvidia-h200\|could not be read"
echo "exit status ${PIPESTATUS[0]}"

echo; echo "## 4. a commit title with a quote and markup"
cp -r results "$work/hostile"
python3 - "$work/hostile/commits.json" <<'PY'
import json, sys
p = sys.argv[1]; data = json.load(open(p))
commits = data["commits"] if "commits" in data else data
key = next(k for k in commits if k.startswith("cb56ab9f9"))
commits[key]["title"] = 'Fix "quotes" <b>bold</b> & <script>alert(1)</script>'
json.dump(data, open(p, "w"))
PY
run ./scripts/bench publish --results-dir "$work/hostile"
echo "in index.html:"; grep -o 'Fix &quot;quotes&quot; &lt;b&gt;bold&lt;/b&gt; &amp; &lt;script&gt;[^<]*' html/index.html | head -1
echo "unescaped <script>alert in any page: $(grep -l '<script>alert' html/*.html | wc -l)"

echo; echo "## 5. Ctrl-C during a build"
export XDG_CACHE_HOME="$work/cache" TMPDIR="$work/tmp"; mkdir -p "$TMPDIR"
say "timeout -s INT 40 ./scripts/bench prebuild main --repo .carry/cuda-python.git --bindings 13.3.1"
timeout -s INT 40 ./scripts/bench prebuild main --repo "$src/.carry/cuda-python.git" --bindings 13.3.1 2>&1 | tail -3
echo "exit status ${PIPESTATUS[0]} (timeout's own 124 after its SIGINT; the command's line above says it stopped)"
echo "hidden or partial entries in the wheel cache: $(find "$work/cache" -name '.*' 2>/dev/null | wc -l)"
echo "left in TMPDIR: $(ls -A "$TMPDIR" | wc -l) $(ls -A "$TMPDIR" | head -3 | tr '\n' ' ')"
