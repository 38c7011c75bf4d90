#!/usr/bin/env bash
# Session 11, calls 3 and 4 (carry as call 1), each on a machine start of its own (the previous one given
# back): two over-C++ runs at main with the default fixed layout, now with the machine start (host.boot),
# the CPU the VM was given and the twins' version in each record, so `python -m cuda_bench.report
# --agreement` tells pairs on one start from pairs across starts. Usage: call3.sh NAME (session11-call3|4)
CALL=$1; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
python3 -c 'import json; from cuda_bench import machine; print(json.dumps(machine.host()))' > $L/host.json
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
tag=${CALL#session11-}
job ${tag}a overhead main --out $M/overhead-cb56ab9f9-s11-${tag}a
job ${tag}b overhead main --out $M/overhead-cb56ab9f9-s11-${tag}b
cp $L/host.json $M/logs/$CALL/
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
