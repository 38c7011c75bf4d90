#!/usr/bin/env bash
# Session 13, every call (carry .carry .whl/common .whl/cu13), each on a fresh machine start: over C++ read in
# the fast state (docs/measurement.md), the first day of the cross-day check, and the reading's own H200 A/A
# and known slowdowns. Usage: bash call.sh CALL [SPIN ...] (e.g. session13-call2 24 96).
# Prebuild main and each bench-inject-spinN (a fixed spin of N turns in Device.set_current, in the carried
# clone only); over C++ at main, at each injected build (--no-write: not a cuda-python commit, so it stays out
# of results/) and at main again; then, for each spin, the paired A/B engine on the injected case and its
# neighbour in _device.pyx: the known answer the over-C++ ratio should move by.
CALL=$1; shift; SPINS="$*"; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; X=${CALL#session}
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5 ${SPINS:+$(printf 'bench-inject-spin%s ' $SPINS)}
job fixed-a overhead main --out $M/overhead-cb56ab9f9-s${X}a
for s in $SPINS; do
  job spin$s overhead bench-inject-spin$s --no-write --out $M/overhead-spin$s-$(git --git-dir=$R rev-parse --short=9 bench-inject-spin$s)-s${X}
done
job fixed-b overhead main --out $M/overhead-cb56ab9f9-s${X}b
for s in $SPINS; do
  job compare-spin$s compare main bench-inject-spin$s --kind injected --expected "bench_device.SetCurrent.time_set_current('core')" \
    -b "SetCurrent|CurrentDevice" --out $M/paired-injected-spin$s-s${X}
done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
