#!/usr/bin/env bash
# Paired runs on the H200 (CUDA 13.3.1 bindings): more process pairs, shorter per case; launch concurrency.
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=/tmp/logs3; mkdir -p $L; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
W=.whl/common:.whl/cu13
P=${PAIRS:-45}; T=${SECONDS_PER:-0.1}
t0=$(date +%s)
job() {  # job NAME ARGS...
  local name=$1; shift; local t1=$(date +%s)
  scripts/offline_run.sh $W $R $S $L "$@" > $L/$name.log 2>&1
  echo "== $name: rc=$? $(( $(date +%s) - t1 )) s: $*"
  grep -E "^\*\*|Controls|environment .* ready|summary.json|calibration:" $L/$name.log | tail -6
  grep -A6 "#### Regressions" $L/$name.log
}
job aa aa main --pairs $P --seconds $T --out $M/paired-aa-cb56ab9f9
job spin8 compare main bench-inject-spin8 --kind injected --expected "bench_device.SetCurrent.time_set_current('core')" --pairs $P --seconds $T --out $M/paired-injected-spin8
job spin4 compare main bench-inject-spin4 --kind injected --expected "bench_device.SetCurrent.time_set_current('core')" --pairs $P --seconds $T --out $M/paired-injected-spin4
job launch5 aa main --no-write -b Launch -b SetCurrent -b Floor --pairs $P --seconds $T --jobs 5 --out $M/explore-aa-launch-jobs5
echo "total $(( $(date +%s) - t0 )) s"
cp -r $L $M/logs-$(date -u +%Y%m%d-%H%M) 2>/dev/null
tar -czf $O/bundle.tar.gz measurements results
