#!/usr/bin/env bash
# Session 15, last call (carry .carry .whl/common .whl/cu13): does the launch path's pace beside the CPU
# (docs/measurement.md, session 15) follow the GPU's state? The launch subset (launches and twelve CPU-bound
# cases) four times, 60 processes, 15 workers at once as in a full run, --no-write, while nvidia-smi logs the
# GPU's clocks, performance state, PCIe link and event reasons every 250 ms (gpu.csv; each subset's start
# and end in times.txt). Usage: bash gpu_state.sh CALL (e.g. session15-call4).
CALL=$1; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; X=${CALL#session}
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
SUBSET=(-b 'Launch\.time_launch\(' -b 'SetCurrent\.' -b 'GetKernel\.' -b 'ComputeCapability\.')
D=$M/logs/$CALL; mkdir -p $D
FIELDS=timestamp,pstate,clocks.sm,clocks.mem,clocks.gr,pcie.link.gen.current,pcie.link.width.current,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$FIELDS --format=csv,noheader >/dev/null 2>&1 || FIELDS=${FIELDS%,clocks_event_reasons.active}
nvidia-smi -q > $D/nvidia-smi-q-before.txt 2>&1
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
nvidia-smi --query-gpu=$FIELDS --format=csv -lms 250 > $D/gpu.csv 2>&1 & logger=$!
for i in 1 2 3 4; do
  echo "subset-$i start $(date -u +%FT%T.%3NZ)" >> $D/times.txt
  job subset-$i overhead main --no-write "${SUBSET[@]}" --out $M/overhead-cb56ab9f9-s${X}-subset-$i
  echo "subset-$i end $(date -u +%FT%T.%3NZ)" >> $D/times.txt
done
kill $logger; nvidia-smi -q > $D/nvidia-smi-q-after.txt 2>&1
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
