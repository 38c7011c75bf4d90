#!/usr/bin/env bash
# Session 11, call 2 (carry as call 1), on ANOTHER machine start (call 1's machine given back): the same
# three over-C++ runs at main (random, fixed, random), so that each layout mode has runs on two starts.
CALL=session11-call2; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
job randomC overhead main --layouts random --out $M/overhead-cb56ab9f9-s11-randomC
job fixed2 overhead main --out $M/overhead-cb56ab9f9-s11-fixed2
job randomD overhead main --layouts random --out $M/overhead-cb56ab9f9-s11-randomD
[ $(( $(date +%s) - t0 )) -lt 500 ] && job fixed3 overhead main --out $M/overhead-cb56ab9f9-s11-fixed3
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
