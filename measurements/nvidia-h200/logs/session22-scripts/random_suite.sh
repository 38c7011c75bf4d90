#!/usr/bin/env bash
# Session 22, on a fresh start (carry .carry .whl/common .whl/cu13). layout.sh and random_verdicts.sh: under one
# layout (ASLR off) what else the process holds moves 5-9 forms by 1.5-4.5%, the same forms on three starts;
# with each worker its own layout (--layouts random) those flags go (0-1 left, PointerGetAttribute, which moves
# under both) and a known x1.05 slowdown is still flagged. Before random layouts can decide a pull request, the
# whole suite, with the thresholds this machine calibrated under one layout:
#  1. two A/A runs at main (should flag nothing);
#  2. the known slowdowns, a 96- and a 24-turn spin in Device.set_current (only SetCurrent('core') flagged?).
# Usage: CALL=session22-suite bash random_suite.sh
CALL=${CALL:-session22-suite}; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s22; E="bench_device.SetCurrent.time_set_current('core')"
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 3 main bench-inject-spin96 bench-inject-spin24
job aa-random-1 compare main main --kind aa --layouts random --out $K/paired-aa-random-suite-1
job spin96-random compare main bench-inject-spin96 --kind injected --expected "$E" --layouts random \
  --out $K/paired-injected-spin96-random-suite
job spin24-random compare main bench-inject-spin24 --kind injected --expected "$E" --layouts random \
  --out $K/paired-injected-spin24-random-suite
job aa-random-2 compare main main --kind aa --layouts random --out $K/paired-aa-random-suite-2
for d in $K/paired-*-suite*; do echo "## $d"; sed -n '5p' $d/comment.md | cut -c1-200; grep -A12 "^#### Regr\|^#### Impr" $d/comment.md | cut -c1-160; done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
