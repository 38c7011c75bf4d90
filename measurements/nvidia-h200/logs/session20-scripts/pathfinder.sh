#!/usr/bin/env bash
# Session 20, call 7 on a fresh start (carry .carry .whl/common .whl/cu13; the carried clone has branch
# bench-pathfinder-1.9.1 from pathfinder_branch.sh): is cuda-pathfinder why the cuda.bindings and CuPy forms
# moved 2-8% in the step 0.5.1 -> main? The release's side had cuda-pathfinder 1.9.1 (PyPI), main's 1.6.0
# built from main. Paired: main against main with 1.9.1's pathfinder code, on the launch, allocation and
# pointer-attribute cases (both sides on cuda-bindings 13.3.1).
CALL=session20-pathfinder; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s20
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
job prebuild prebuild --parallel 2 main bench-pathfinder-1.9.1
job compare-pathfinder compare main bench-pathfinder-1.9.1 -b "Launch|AllocFree|PointerGetAttribute|SetCurrent|StreamCreate" \
  --out $K/paired-pathfinder-1.9.1
sed -n '1,12p' $K/paired-pathfinder-1.9.1/comment.md | cut -c1-300
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz $K/paired-pathfinder-1.9.1 measurements/nvidia-h200/logs/$CALL && rm -rf $L
