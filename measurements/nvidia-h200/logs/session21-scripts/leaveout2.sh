#!/usr/bin/env bash
# Session 21, call 2 on a fresh start (carry .carry .whl/common .whl/cu13). Call 1 (leaveout.sh): main against
# main with cuda.core left out of the head's workers moved 11 of 41 cuda.bindings forms by 1.6-5.8%, most of
# them the forms the step 0.5.1 -> main had slowed. Left out, or just a longer environment (a layout change
# under setarch -R)? Three paired runs on every cuda.bindings form, only the head's workers changed:
#  1. CUDA_BENCH_LEAVE_OUT=none: the same environment size, nothing left out (the control: should flag nothing);
#  2. CUDA_BENCH_LEAVE_OUT=core again, on a second start;
#  3. CUDA_CORE_DONT_FIX_TAB_COMPLETION=1 (cuda.core imported without its rlcompleter/readline import).
CALL=session21-leaveout2; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s21
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
CUDA_BENCH_BINDINGS=auto job prebuild prebuild main
B=("-b" "\('bindings'" "-b" "^bench_harness\.Floor")
job control compare main main --head-env CUDA_BENCH_LEAVE_OUT=none "${B[@]}" --out $K/paired-leave-out-none-bindings
job core compare main main --head-env CUDA_BENCH_LEAVE_OUT=core "${B[@]}" --out $K/paired-leave-out-core-bindings-2
job no-rlcompleter compare main main --head-env CUDA_CORE_DONT_FIX_TAB_COMPLETION=1 "${B[@]}" \
  --out $K/paired-no-rlcompleter-bindings
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
