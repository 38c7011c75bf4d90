#!/usr/bin/env bash
# Session 12, call 4 (carry .carry .whl/common .whl/cu13): why are some over-C++ worker processes twice as
# fast as the rest (session 12 call 1's kept groups), and why did call 3's second run read ratios 30% lower?
# 1. smt_probe.py: which CPUs slow each other down (a hidden shared physical core).
# 2. The same five cases with every ABBA group and each process's core kept, on every CPU but the first
#    (the default) and on one CPU per group the probe found (the controller on the first of them).
CALL=session12-call4; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; P=measurements/nvidia-h200/logs/session12-scripts
mkdir -p $M/logs/$CALL
python3 $P/smt_probe.py $O > $L/smt.log 2>&1; cat $L/smt.log; cp $L/smt.log $O/smt.json $M/logs/$CALL/
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
B='GetKernel|ComputeCapability|RuntimeVersion|SetCurrent|CurrentDevice'
job groups-all overhead main --keep-groups -b "$B" --out $M/overhead-cb56ab9f9-s12-call4-all
mv $M/overhead-cb56ab9f9-s12-call4-all/groups.json.gz $O/groups-all.json.gz
taskset -pc "$(cat $O/smt_cores.txt)" $$ > /dev/null
job groups-sep overhead main --keep-groups -b "$B" --out $M/overhead-cb56ab9f9-s12-call4-sep
taskset -pc 0-$(( $(nproc --all) - 1 )) $$ > /dev/null
mv $M/overhead-cb56ab9f9-s12-call4-sep/groups.json.gz $O/groups-sep.json.gz
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L  # the job logs are in the bundle; 8 files come back
