#!/usr/bin/env bash
# Device call 1: paired A/A of main and the injected spin8 commit against main (CUDA 13.3.1 bindings).
set -u
export PYTHONUNBUFFERED=1
O=$OUT; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3
W=.whl/common:.whl/cu13
nproc; date -u
t0=$(date +%s)
CUDA_BENCH_BINDINGS=13.3.1 scripts/offline_run.sh $W $R $S $O prebuild main bench-inject-spin8 bench-inject-spin4 > $O/prebuild.log 2>&1
echo "prebuild rc=$? $(( $(date +%s) - t0 )) s"; tail -5 $O/prebuild.log
for job in "aa main --pairs ${PAIRS:-15} --out $M/paired-aa-cb56ab9f9" \
           "compare main bench-inject-spin8 --kind injected --expected bench_device.SetCurrent.time_set_current('core') --pairs ${PAIRS:-15} --out $M/paired-injected-spin8"; do
  t1=$(date +%s)
  eval scripts/offline_run.sh $W $R $S $O $job > $O/job.log 2>&1
  rc=$?
  name=$(echo $job | awk '{print $1}')
  cp $O/job.log $O/$name.log
  echo "== $job: rc=$rc $(( $(date +%s) - t1 )) s"
  grep -E "^\*\*|paired:|regression|thresholds|summary.json|Controls" $O/$name.log | tail -12
done
echo "total $(( $(date +%s) - t0 )) s"
