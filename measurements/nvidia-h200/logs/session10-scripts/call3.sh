#!/usr/bin/env bash
# Session 10, call 3 (carry .carry .whl/common .whl/cu13; main's wheel from call 1 when the machine stayed
# warm): Python over C++ at main on a new machine start, with the C++ sync twins on a stream and event of
# their own (first GPU run of them), twice; between them a paired A/A of main on this machine start.
CALL=session10-call3; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
job overheadA overhead main --out $M/overhead-cb56ab9f9-s10a
job aa aa main --out $M/paired-aa-cb56ab9f9-s10
[ $(( $(date +%s) - t0 )) -lt 480 ] && job overheadB overhead main --out $M/overhead-cb56ab9f9-s10b
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
