#!/usr/bin/env bash
# Session 12, call 1 (prepared in session 11, not yet run; carry .carry .whl/common .whl/cu13): does an
# over-C++ ratio follow the cores' speed within a run? Two fixed-layout runs at main on one machine start,
# the first keeping every ABBA group (--keep-groups, the cases whose ratios moved most between starts, so
# the file stays under the 16 MiB a returned file may have), the second the whole suite for the
# cross-start table (`python -m cuda_bench.report --agreement`).
CALL=session12-call1; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild cb56ab9f9ae3b4a0ef19666697336945925589a5
job groups overhead main --keep-groups -b 'GetKernel|ComputeCapability|RuntimeVersion|SetCurrent|CurrentDevice' \
  --out $M/overhead-cb56ab9f9-s12-groups
cp $M/overhead-cb56ab9f9-s12-groups/groups.json.gz $O/ && rm $M/overhead-cb56ab9f9-s12-groups/groups.json.gz
job fixed overhead main --out $M/overhead-cb56ab9f9-s12-fixed
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
