#!/usr/bin/env bash
# Session 22, after layout.sh (carry .carry .whl/common .whl/cu13). layout.sh: with ASLR on, each worker its own
# layout, leaving cuda.core out of the head's workers moves nothing but one cuda.bindings form, where one layout
# moved nine; and leaving CuPy out moves cuda.bindings and cuda.core forms under one layout too. So what else the
# process holds moves a form through the layout. Do random layouts keep the verdicts that matter?
#  1. a known slowdown (a 24-turn spin in Device.set_current, x1.05 under one layout): still flagged?
#  2. the release step 0.5.1 -> main on the cuda.bindings forms (9 flagged under one layout, session 21);
#  3. the head without CuPy on the cuda.core forms (6 flagged under one layout in layout.sh).
# Usage: CALL=session22-random bash random_verdicts.sh
CALL=${CALL:-session22-random}; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s22; MAIN=cb56ab9f9ae3b4a0ef19666697336945925589a5
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 3 $MAIN cuda-core-v0.5.1 bench-inject-spin24
job spin24-random compare main bench-inject-spin24 --layouts random --kind injected \
  --expected "bench_device.SetCurrent.time_set_current('core')" -b "SetCurrent|CurrentDevice" \
  --out $K/paired-injected-spin24-random
job release-random compare cuda-core-v0.5.1 $MAIN --layouts random --kind release --bindings auto \
  -b "\('bindings'" -b "^bench_harness\.Floor" --out $K/paired-release-v0.5.1-main-bindings-random
job cupy-core-random compare main main --layouts random --head-env CUDA_BENCH_LEAVE_OUT=cupy -b "\('core'" \
  -b "^bench_harness\.Floor" --out $K/paired-leave-out-cupy-core-random
for d in $K/paired-*random; do echo "## $d"; sed -n '1,6p' $d/comment.md | cut -c1-300; done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
