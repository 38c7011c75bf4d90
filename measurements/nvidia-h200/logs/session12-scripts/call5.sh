#!/usr/bin/env bash
# Session 12, call 5 (carry .carry .whl/common .whl/cu13): call 4 found that with 15 workers at once about
# half the processes run Python twice as slowly (the C++ twin ~1.2x), so the ratio depends on how many of a
# run's processes land in that state; with 3 workers at once nearly all ran fast. Two runs of the whole
# suite with 4 workers at once (30 processes each, to fit the device time) on one machine start.
CALL=session12-call5; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
for x in a b; do job quiet-$x overhead main --jobs 4 --pairs 30 --out $M/overhead-cb56ab9f9-s12-call5-quiet$x; done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L  # the job logs are in the bundle
