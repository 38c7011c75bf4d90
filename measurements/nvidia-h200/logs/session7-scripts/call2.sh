#!/usr/bin/env bash
# Paired runs on the H200 (CUDA 13.3.1 bindings): A/A of main (calibration), then main vs the injected commits.
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=/tmp/logs; mkdir -p $L; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
W=.whl/common:.whl/cu13
P=${PAIRS:-15}
t0=$(date +%s)
job() {  # job NAME ARGS...
  local name=$1; shift; local t1=$(date +%s)
  scripts/offline_run.sh $W $R $S $L "$@" > $L/$name.log 2>&1
  echo "== $name: rc=$? $(( $(date +%s) - t1 )) s: $*"
  grep -E "^\*\*|regressions?\b.*improvement|Controls|environment .* ready|summary.json|calibration:" $L/$name.log | tail -8
}
job aa aa main --pairs $P --out $M/paired-aa-cb56ab9f9
job spin8 compare main bench-inject-spin8 --kind injected --expected "bench_device.SetCurrent.time_set_current('core')" --pairs $P --out $M/paired-injected-spin8
grep -A4 "#### Regressions" $L/spin8.log
job spin4 compare main bench-inject-spin4 --kind injected --expected "bench_device.SetCurrent.time_set_current('core')" --pairs $P --out $M/paired-injected-spin4
grep -A4 "#### Regressions" $L/spin4.log
echo "total $(( $(date +%s) - t0 )) s"
cp -r $L $M/logs-$(date -u +%Y%m%d-%H%M) 2>/dev/null
tar -czf $O/bundle.tar.gz measurements results
