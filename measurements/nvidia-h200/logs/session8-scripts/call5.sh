#!/usr/bin/env bash
# Session 8, last call (cuda-bindings 13.3.1; carry .carry .whl/common .whl/cu13): over C++ at main with 5
# processes at a time instead of 10 (does GPU contention between concurrent processes widen the intervals?).
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=/tmp/logs; mkdir -p $L; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
W=.whl/common:.whl/cu13
t0=$(date +%s)
CUDA_BENCH_BINDINGS=13.3.1 scripts/offline_run.sh $W $R $S $L prebuild main > $L/prebuild.log 2>&1; echo "prebuild rc=$? $(( $(date +%s) - t0 )) s"
scripts/offline_run.sh $W $R $S $L overhead main --pairs 15 --jobs 5 --no-write --out $M/overhead-cb56ab9f9-jobs5 > $L/overhead.log 2>&1; echo "overhead rc=$? $(( $(date +%s) - t0 )) s"
mkdir -p $M/logs/session8-call6; cp $L/*.log $M/logs/session8-call6/
tar -czf $O/bundle.tar.gz $M/overhead-cb56ab9f9-jobs5 $M/logs/session8-call6
