#!/usr/bin/env bash
# Session 22, on a fresh start (carry .carry .whl/common .whl/cu13). Session 21 found that leaving cuda.core out
# of the head's workers moves 8 of 41 cuda.bindings forms by 1.6-5.8% (main against main, ASLR off: one
# memory layout per run). Is that the layout (where code and data land once cuda.core's objects are loaded) or
# a cost that cuda.core's presence adds whatever the layout? Paired, main against main, every cuda.bindings form:
#  1. A/A with ASLR on, each worker its own layout (--layouts random): the control, should flag nothing;
#  2. the head without cuda.core, random layouts: a layout effect averages out over the 45 pairs, a cost stays;
#  3. the head without cuda.core, one layout (as session 21; a third start);
#  4. the head without CuPy, one layout: does another library's absence move the same forms?
#  5. the head without CuPy on the cuda.core forms: does a cuda.core number depend on CuPy being in the process?
# Usage: CALL=session22-layout bash layout.sh
CALL=${CALL:-session22-layout}; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s22
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
CUDA_BENCH_BINDINGS=auto job prebuild prebuild main
B=("-b" "\('bindings'" "-b" "^bench_harness\.Floor")
job aa-random compare main main --layouts random "${B[@]}" --out $K/paired-aa-random-bindings
job core-random compare main main --layouts random --head-env CUDA_BENCH_LEAVE_OUT=core "${B[@]}" \
  --out $K/paired-leave-out-core-random-bindings
job core-fixed compare main main --head-env CUDA_BENCH_LEAVE_OUT=core "${B[@]}" --out $K/paired-leave-out-core-bindings-3
job cupy-fixed compare main main --head-env CUDA_BENCH_LEAVE_OUT=cupy "${B[@]}" --out $K/paired-leave-out-cupy-bindings
job cupy-core compare main main --head-env CUDA_BENCH_LEAVE_OUT=cupy -b "\('core'" -b "^bench_harness\.Floor" \
  --out $K/paired-leave-out-cupy-core
for d in $K/paired-*; do echo "## $d"; sed -n '1,6p' $d/comment.md | cut -c1-300; done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
