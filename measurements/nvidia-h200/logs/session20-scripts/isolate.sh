#!/usr/bin/env bash
# Session 20, call 8 on a fresh start (carry .carry .whl/common .whl/cu13): the step 0.5.1 -> main moved
# cuda.bindings forms by 2-8% (not cuda-pathfinder: pathfinder.sh). Every worker imports cuda.core
# (benchmarks/_compat.py) and runs every case of the run, cuda.core's forms included. Which of the two is it?
#  1. the step's own pairing on the cuda.bindings forms only (no cuda.core form runs in the workers);
#  2. one case alone, Launch('bindings', '512 ptr') (x1.04-1.05 on three starts), each worker running nothing else.
# If the ratios stay, cuda.core's presence in the process moves them; if they fall to 1, other cases' leftovers do.
CALL=session20-isolate; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s20; MAIN=cb56ab9f9ae3b4a0ef19666697336945925589a5
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 2 cuda-core-v0.5.1 $MAIN
job bindings-only compare cuda-core-v0.5.1 $MAIN --kind release --bindings auto -b "\('bindings'" -b "^bench_harness\.Floor" \
  --out $K/paired-release-v0.5.1-main-bindings-only
job one-case compare cuda-core-v0.5.1 $MAIN --kind release --bindings auto -b "^bench_launch\.Launch\.time_launch\('bindings', '512 ptr'\)$" -b "^bench_harness\.Floor" \
  --out $K/paired-release-v0.5.1-main-one-case
for d in bindings-only one-case; do sed -n '4p' $K/paired-release-v0.5.1-main-$d/comment.md; done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz $K/paired-release-v0.5.1-main-* measurements/nvidia-h200/logs/$CALL && rm -rf $L
