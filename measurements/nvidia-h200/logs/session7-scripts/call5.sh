#!/usr/bin/env bash
# Paired release steps on the H200: cuda-core 0.3.0 -> 0.3.1 -> 0.3.2 -> 0.4.0, all on cuda-bindings 12.9.10.
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=/tmp/logs5; mkdir -p $L; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
mkdir -p $C/cuda-headers-12.9 && tar -xJf .carry/cuda-headers-12.9.tar.xz -C $C/cuda-headers-12.9
mkdir -p /tmp/nvrtc12 && tar -xJf .carry/nvrtc12.tar.xz -C /tmp/nvrtc12 && export LD_LIBRARY_PATH=/tmp/nvrtc12/nvidia/cuda_nvrtc/lib
W=.whl/common:.whl/cu12
P=30; T=0.1; B=12.9.10
t0=$(date +%s)
job() {  # job NAME ARGS...
  local name=$1; shift; local t1=$(date +%s)
  scripts/offline_run.sh $W $R $S $L "$@" > $L/$name.log 2>&1
  echo "== $name: rc=$? $(( $(date +%s) - t1 )) s: $*"
  grep -E "^\*\*|Controls|summary.json" $L/$name.log | tail -4
  grep -A12 "#### Regressions\|#### Improvements" $L/$name.log | grep "^| \`"
  cp -r $L $M/logs-release 2>/dev/null; tar -czf $O/bundle.tar.gz measurements results
}
CUDA_BENCH_BINDINGS=$B job prebuild prebuild cuda-core-v0.3.0 cuda-core-v0.3.1 cuda-core-v0.3.2 cuda-core-v0.4.0
job r1 compare cuda-core-v0.3.0 cuda-core-v0.3.1 --kind release --bindings $B --pairs $P --seconds $T --out $M/paired-release-v0.3.0-v0.3.1
job r2 compare cuda-core-v0.3.1 cuda-core-v0.3.2 --kind release --bindings $B --pairs $P --seconds $T --out $M/paired-release-v0.3.1-v0.3.2
job r3 compare cuda-core-v0.3.2 cuda-core-v0.4.0 --kind release --bindings $B --pairs $P --seconds $T --out $M/paired-release-v0.3.2-v0.4.0
echo "total $(( $(date +%s) - t0 )) s"
