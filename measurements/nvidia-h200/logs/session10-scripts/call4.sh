#!/usr/bin/env bash
# Session 10, call 4 (carry .carry .whl/common .whl/cu13): the C++ twins at main's head under asv, after
# bench_cpp.Cpp got a version of its own (twins.cpp changed: the sync twins' own stream and event), so that the
# overview's C++ column at cb56ab9f9 is the twins the over-C++ runs of this session timed.
CALL=session10-call4; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
job cpp cb56ab9f9^! --bench bench_cpp --no-steps --no-overhead --no-publish
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
