#!/usr/bin/env bash
# Session 8, call 1 (run twice: the first run left CuPy cases unmeasured, see call3 in the notes): paired release steps cuda-core 0.3.0 -> 0.3.1 -> 0.3.2 -> 0.4.0, whole suite, all on
# cuda-bindings 12.9.10 (carry: .carry .carry-cu12 .whl/common .whl/cu12).
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=/tmp/logs; mkdir -p $L; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
mkdir -p $C/cuda-headers-12.9 && tar -xJf .carry/cuda-headers-12.9.tar.xz -C $C/cuda-headers-12.9
mkdir -p /tmp/nvrtc12 && tar -xJf .carry-cu12/nvrtc12.tar.xz -C /tmp/nvrtc12 && export LD_LIBRARY_PATH=/tmp/nvrtc12/nvidia/cuda_nvrtc/lib
W=.whl/common:.whl/cu12
P=30; T=0.1; B=12.9.10
t0=$(date +%s)
job() {  # job NAME ARGS...
  local name=$1; shift; local t1=$(date +%s)
  scripts/offline_run.sh $W $R $S $L "$@" > $L/$name.log 2>&1
  echo "== $name: rc=$? $(( $(date +%s) - t1 )) s: $*"
  grep -E "^\*\*|Controls|summary.json|Not measured" $L/$name.log | tail -5
  grep -A40 "#### Regressions\|#### Improvements\|#### Not measured" $L/$name.log | grep "^| \`\|^- \`" | head -40
  mkdir -p $M/logs/session8-call1; cp $L/$name.log $M/logs/session8-call1/; tar -czf $O/bundle.tar.gz measurements results
}
rm -rf $M/paired-release-* $M/logs/session8-call1
CUDA_BENCH_BINDINGS=$B job prebuild prebuild cuda-core-v0.3.0 cuda-core-v0.3.1 cuda-core-v0.3.2 cuda-core-v0.4.0
for pair in "0.3.0 0.3.1" "0.3.1 0.3.2" "0.3.2 0.4.0"; do
  set -- $pair
  job r$1-$2 compare cuda-core-v$1 cuda-core-v$2 --kind release --bindings $B --pairs $P --seconds $T --out $M/paired-release-v$1-v$2
done
tail -5 $L/apis.txt > $M/logs/session8-call1/apis-tail.txt 2>/dev/null
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
