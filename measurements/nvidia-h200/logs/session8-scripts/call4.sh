#!/usr/bin/env bash
# Session 8, call 5 (cuda-bindings 13.3.1; carry .carry .whl/common .whl/cu13): asv run of main's previous
# commit c278ecb3 with the unrolled body, so that every graph has two commits of the new benchmark versions.
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=/tmp/logs; mkdir -p $L; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
W=.whl/common:.whl/cu13
t0=$(date +%s)
CUDA_BENCH_BINDINGS=13.3.1 scripts/offline_run.sh $W $R $S $L prebuild c278ecb3 > $L/prebuild.log 2>&1; echo "prebuild rc=$? $(( $(date +%s) - t0 )) s"
scripts/offline_run.sh $W $R $S $L c278ecb3^! --no-steps > $L/asv.log 2>&1; echo "asv rc=$? $(( $(date +%s) - t0 )) s"
mkdir -p $M/logs/session8-call5; cp $L/*.log $M/logs/session8-call5/
tar -czf $O/bundle.tar.gz measurements/nvidia-h200/logs/session8-call5 results
