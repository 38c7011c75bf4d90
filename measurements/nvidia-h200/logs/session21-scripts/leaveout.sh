#!/usr/bin/env bash
# Session 21, after call.sh on the same start (carry .carry .whl/common .whl/cu13; main already built): session
# 20's open question (docs/ladder-h200.md). Main's cuda.core in the process slowed cuda.bindings' pointer
# launches by 2-8%. Paired, main against main, only the head's workers changed:
#  1. cuda.core never imported (CUDA_BENCH_LEAVE_OUT=core), on Launch('bindings', '512 ptr') alone and on every
#     cuda.bindings form: if the import is the cause, the head reads faster (x0.92-0.98);
#  2. cuda.core imported without its rlcompleter patch (CUDA_CORE_DONT_FIX_TAB_COMPLETION=1, cuda.core's own
#     opt-out; main imports rlcompleter, and with it readline, unconditionally): is that part the cause?
CALL=session21-leaveout; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s21
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
ONE=("-b" "^bench_launch\.Launch\.time_launch\('bindings', '512 ptr'\)$" "-b" "^bench_harness\.Floor")
job one-case compare main main --head-env CUDA_BENCH_LEAVE_OUT=core "${ONE[@]}" --out $K/paired-leave-out-core-one-case
job bindings-only compare main main --head-env CUDA_BENCH_LEAVE_OUT=core -b "\('bindings'" -b "^bench_harness\.Floor" \
  --out $K/paired-leave-out-core-bindings
job no-rlcompleter compare main main --head-env CUDA_CORE_DONT_FIX_TAB_COMPLETION=1 "${ONE[@]}" \
  --out $K/paired-no-rlcompleter-one-case
for d in $K/paired-*; do echo "## $d"; sed -n '1,6p' $d/comment.md | cut -c1-400; done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
