#!/usr/bin/env bash
# Session 11, call 1 (prepared in session 10, not yet run; carry .carry .whl/common .whl/cu13): does a memory
# layout per process make over C++ agree across machine starts? Two runs with ASLR on (--layouts random) and
# one as before (fixed), at main, on one machine start; compare with overhead_agreement.py against session
# 9 and 10's fixed-layout runs. Then asv's C++ twins at main (bench_cpp's new version) if time is left.
CALL=session11-call1; source measurements/nvidia-h200/logs/session10-scripts/head.sh  # the session 10 helper, as it ran
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
job randomA overhead main --layouts random --out $M/overhead-cb56ab9f9-s11-randomA
job fixed overhead main --out $M/overhead-cb56ab9f9-s11-fixed
job randomB overhead main --layouts random --out $M/overhead-cb56ab9f9-s11-randomB
[ $(( $(date +%s) - t0 )) -lt 420 ] && job cpp cb56ab9f9^! -b bench_cpp --no-steps --no-overhead --no-publish
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
