#!/usr/bin/env bash
# Session 18 (2026-12-04 again): `scripts/bench steps` (check.sh steps, first call) measured the three missing
# steps again; 76bac4e11 -> c278ecb3d flagged ProgramOptionsCreate('core') x1.024 [1.015, 1.028], where
# session 17's run of the same step (records lost) flagged nothing. Does it come back on another machine
# start, and is the build the same? Carry .carry .whl/common .whl/cu13.
#   r1    the whole step again (fresh builds on a fresh machine)
#   r2    ProgramOptionsCreate and the floor only, 90 process pairs
#   aa    c278ecb3d against itself, the same two cases, 90 pairs
#   then the sha256 of each build's cuda.core extension modules (is a build of one commit the same bytes
#   on two machine starts; which modules does the step change)
CALL=session18-repeat; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s18
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
B="ProgramOptionsCreate|Floor"
job r1 compare 76bac4e11 c278ecb3d --kind pr --out $K/paired-step-c278ecb3d-r1
job r2 compare 76bac4e11 c278ecb3d --kind pr -b "$B" --pairs 90 --out $K/paired-step-c278ecb3d-r2-programoptions
job aa compare c278ecb3d c278ecb3d --kind aa -b "$B" --pairs 90 --out $K/paired-aa-c278ecb3d-programoptions
mkdir -p $K; for e in .asv/paired/*; do (cd $e/lib/python3.12/site-packages/cuda/core && find . -name "*.so" | sort | xargs sha256sum | sed "s|^|$(basename $e) |"); done > $K/so-sha256.txt
wc -l $K/so-sha256.txt; grep -E "_program|_resource_handles" $K/so-sha256.txt
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
