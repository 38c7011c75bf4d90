#!/usr/bin/env bash
# Session 19, the release ladder's paired steps (carry .carry .whl/common .whl/cu12 .whl/cu13), right after
# stage.sh on the same warm machine: `scripts/bench steps --bindings auto` makes the history's missing steps
# of the ladder's environment, cuda-core 0.1.0 -> 0.1.1 -> 0.2.0 -> 0.3.2 -> 0.4.2 -> 0.5.1, each side with the
# cuda-bindings it supports (12.9.10 up to 0.2.0, 13.3.1 from 0.3.2). A step finished is a line of
# steps.jsonl; one cut off by the time limit is still missing and made by the next call, so a call runs
# `steps` for at most STEPS_S seconds. With RECHECK=1 it then measures again the flags of other starts.
# Usage: bash ladder.sh CALL [STEPS_S]
CALL=$1; STEPS_S=${2:-420}; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu12:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
if [ -f /tmp/nvrtc12/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 ]; then
  export LD_LIBRARY_PATH=/tmp/nvrtc12/nvidia/cuda_nvrtc/lib
else
  echo "no NVRTC 12 on this machine (a fresh start, stage.sh did not run here): CUDA 12 sides cannot compile"
fi
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 6 cuda-core-v0.1.0 cuda-core-v0.1.1 cuda-core-v0.2.0 \
  cuda-core-v0.3.2 cuda-core-v0.4.2 cuda-core-v0.5.1
t1=$(date +%s)
timeout -k 20 -s INT $STEPS_S scripts/offline_run.sh $W $R $S $L steps --bindings auto > $L/steps.log 2>&1
echo "== steps: rc=$? $(( $(date +%s) - t1 )) s"; grep -E "^bench: step|regression|not measured|^  " $L/steps.log | tail -25
if [ "${RECHECK:-0}" = 1 ]; then
  scripts/offline_run.sh $W $R $S $L steps --recheck > $L/recheck.log 2>&1
  echo "== recheck: rc=$?"; grep -E "steps --recheck|->" $L/recheck.log | tail -15
fi
scripts/offline_run.sh $W $R $S $L steps --bindings auto --list > $L/left.log 2>&1; grep -A8 "missing" $L/left.log
mkdir -p $M/logs/$CALL; cp $L/*.log $M/logs/$CALL/ 2>/dev/null
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements/nvidia-h200/logs/$CALL results && rm -rf $L
