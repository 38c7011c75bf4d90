#!/usr/bin/env bash
# Session 21, call 4 on a fresh start (carry .carry .whl/common .whl/cu13; the carried clone has branch
# bench-pathfinder-1.9.1 from session20-scripts/pathfinder_branch.sh). Session 20's pathfinder compare flagged
# two cuda.core forms on its one start, StreamCreate('core') x1.035 and AllocFreeSync('core', 'keep') x1.015:
# measured again on another start, with their neighbours.
CALL=session21-pathfinder; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s21
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
job prebuild prebuild --parallel 2 main bench-pathfinder-1.9.1
job compare-pathfinder compare main bench-pathfinder-1.9.1 -b "Launch|AllocFree|PointerGetAttribute|SetCurrent|StreamCreate" \
  --out $K/paired-pathfinder-1.9.1-again
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
