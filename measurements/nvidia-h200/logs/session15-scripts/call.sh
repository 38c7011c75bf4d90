#!/usr/bin/env bash
# Session 15 (carry .carry .whl/common .whl/cu13), on a fresh machine start: two over-C++ runs at main (one
# more start for the cross-start record), and between them a test of why launches with arguments read 4-9%
# higher over C++ on some starts (session 14's second and third) while the C++ launch does not move: is it
# the rest of the host's memory traffic? The same subset (launches, and three cases without arguments to
# move) three times, 7 workers at once on cores 1-7, with cores 9-15: idle; each streaming memory (numpy
# copies of 256 MB, beyond any cache); each spinning in a small loop (CPU only). --no-write: a subset with
# other concurrency is not a run of the suite. Usage: bash call.sh CALL (e.g. session15-call1).
CALL=$1; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; X=${CALL#session}
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
PY=$S/../../../bin/python; [ -x $PY ] || PY=python3
SUBSET=(-b 'Launch\.time_launch\(' -b 'SetCurrent\.' -b 'GetKernel\.' -b 'ComputeCapability\.')
hogs() {  # hogs KIND: one process per core 9-15, until killed
  for core in 9 10 11 12 13 14 15; do
    case $1 in
      memory) taskset -c $core $PY -c 'import numpy as n
a = n.ones(2**25); b = n.empty_like(a)
while True: n.copyto(b, a)' & ;;
      cpu) taskset -c $core $PY -c 'x = 0
while True: x += 1' & ;;
    esac
  done
}
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
job fixed-a overhead main --out $M/overhead-cb56ab9f9-s${X}a
for load in idle memory cpu; do
  hogs $load; sleep 2
  job subset-$load overhead main --jobs 7 --no-write "${SUBSET[@]}" --out $M/overhead-cb56ab9f9-s${X}-subset-$load
  kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
done
job fixed-b overhead main --out $M/overhead-cb56ab9f9-s${X}b
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
