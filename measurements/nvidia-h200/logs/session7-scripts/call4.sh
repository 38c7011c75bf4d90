#!/usr/bin/env bash
# Paired runs on the H200 (CUDA 13.3.1 bindings): A/A (same build; two builds of the same behaviour) -> thresholds,
# then main vs an injected slowdown of Device.set_current.
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=/tmp/logs4; mkdir -p $L; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
W=.whl/common:.whl/cu13
P=45; T=0.1
t0=$(date +%s)
job() {  # job NAME ARGS...
  local name=$1; shift; local t1=$(date +%s)
  scripts/offline_run.sh $W $R $S $L "$@" > $L/$name.log 2>&1
  echo "== $name: rc=$? $(( $(date +%s) - t1 )) s: $*"
  grep -E "^\*\*|Controls|environment .* ready|summary.json|calibration:" $L/$name.log | tail -6
  grep -A8 "#### Regressions\|#### Improvements" $L/$name.log | grep "^|"
}
CUDA_BENCH_BINDINGS=13.3.1 job prebuild prebuild main bench-null bench-inject-spin24
job aa aa main --pairs $P --seconds $T --out $M/paired-aa-cb56ab9f9
job aabuild aa main --against bench-null --pairs $P --seconds $T --out $M/paired-aa-rebuild-075fdef02
job spin24 compare main bench-inject-spin24 --kind injected --expected "bench_device.SetCurrent.time_set_current('core')" --pairs $P --seconds $T --out $M/paired-injected-spin24
echo "total $(( $(date +%s) - t0 )) s"
cp -r $L $M/logs-$(date -u +%Y%m%d-%H%M) 2>/dev/null
tar -czf $O/bundle.tar.gz measurements results
