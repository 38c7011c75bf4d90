#!/usr/bin/env bash
# Session 21, call 3 on a fresh start (carry .carry .whl/common .whl/cu13). Calls 1 and 2: leaving main's
# cuda.core out of the workers undoes most of the step 0.5.1 -> main's cuda.bindings slowdowns (x0.95-0.98,
# two starts), but not Launch('bindings', '512 ptr') (x1.000, x0.995), which the step and session 20's
# one-case run read x1.04-1.05. The step again, on the cuda.bindings forms, on one start:
#  1. as the step runs it (each side imports its own cuda.core; session 20's bindings-only run, repeated);
#  2. neither side's workers import cuda.core (--base-env and --head-env CUDA_BENCH_LEAVE_OUT=core): what is
#     left comes from the rest of the two environments (cuda-pathfinder 1.9.1 against main's, the venvs).
CALL=session21-release; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s21; MAIN=cb56ab9f9ae3b4a0ef19666697336945925589a5
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 2 cuda-core-v0.5.1 $MAIN
B=("-b" "\('bindings'" "-b" "^bench_harness\.Floor")
job with-core compare cuda-core-v0.5.1 $MAIN --kind release --bindings auto "${B[@]}" \
  --out $K/paired-release-v0.5.1-main-bindings-only
job without-core compare cuda-core-v0.5.1 $MAIN --kind release --bindings auto "${B[@]}" \
  --base-env CUDA_BENCH_LEAVE_OUT=core --head-env CUDA_BENCH_LEAVE_OUT=core \
  --out $K/paired-release-v0.5.1-main-bindings-without-core
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
