#!/usr/bin/env bash
# Session 12, calls 2 and on (carry .carry .whl/common .whl/cu13): a fresh machine start on a later day than
# session 11's runs; prebuild main and run over C++ twice with fixed layouts, for the cross-day table
# (`python -m cuda_bench.report --agreement`). Usage: bash fixed2.sh CALL (e.g. session12-call2). Runs made
# after 2026-12-04 04:00 UTC read each ratio in the fast state (docs/measurement.md): the same call serves
# the next sessions (bash fixed2.sh session13-call1), whose runs are compared among themselves.
CALL=$1; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
for x in a b; do job fixed-$x overhead main --out $M/overhead-cb56ab9f9-s${CALL#session}$x; done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
