#!/usr/bin/env bash
# Session 18: `scripts/bench steps --recheck` (new) on a fresh machine start, into results/: it measures
# again the history's regressions flagged on one start only (here ProgramOptionsCreate('core') at
# 76bac4e11 -> c278ecb3d, flagged in the first call of this session) and says how each stands.
# Carry .carry .whl/common .whl/cu13.
CALL=session18-recheck; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
job recheck steps --recheck
grep -E "steps --recheck|->|standing|not reproduced|confirmed" $L/recheck.log | grep -v "^\[build\]" | tail -8
job recheck-list steps --recheck --list
tail -3 $L/recheck-list.log
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
