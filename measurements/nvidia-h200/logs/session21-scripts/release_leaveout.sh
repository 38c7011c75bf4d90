#!/usr/bin/env bash
# Session 21, call 5 on a fresh start (carry .carry .whl/common .whl/cu13). Calls 1-3 implied that a process
# with cuda-core 0.5.1 runs Launch('bindings', '256 ptr'/'512 ptr') about 4% faster than one with no cuda.core
# (the step with each side's own cuda.core x1.04, without either x1.00, main's against none x0.995-1.000).
# Measured directly: 0.5.1 against 0.5.1, the head's workers without cuda.core, on every cuda.bindings form.
CALL=session21-release-leaveout; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s21
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cuda-core-v0.5.1
job v051-without-core compare cuda-core-v0.5.1 cuda-core-v0.5.1 --bindings auto -b "\('bindings'" \
  -b "^bench_harness\.Floor" --head-env CUDA_BENCH_LEAVE_OUT=core --out $K/paired-v0.5.1-leave-out-core-bindings
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
