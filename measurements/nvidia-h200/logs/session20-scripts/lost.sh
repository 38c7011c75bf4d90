#!/usr/bin/env bash
# Session 20, call 2 on the warm machine of call 1 (carry .carry .whl/common .whl/cu13): lost process pairs on
# the GPU. A paired A/A of cb56ab9f9 over the whole suite while a second process kills two of its workers
# (SIGKILL, 12 s and 27 s after the first worker appears). The report must name each loss ("1 of 45 process
# pairs lost, measured from the other 44") and exit 2, the A/A must flag nothing, and summary.json must hold
# every case.
CALL=session20-lost; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s20
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
( for i in $(seq 1200); do pgrep -f cuda_bench.worker > /dev/null && break; sleep 0.5; done; t1=$(date +%s)
  for wait in 12 15; do
    sleep $wait; p=$(pgrep -n -f cuda_bench.worker) || continue
    echo "$(( $(date +%s) - t1 )) s after the first worker: kill -9 $p: $(tr '\0' ' ' < /proc/$p/cmdline)"
    kill -9 $p
  done ) > $L/killer.log 2>&1 &
job aa-killed compare main main --kind aa --out $K/paired-aa-killed-cb56ab9f9
wait; cat $L/killer.log; cp $L/killer.log $M/logs/$CALL/
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz $K/paired-aa-killed-cb56ab9f9 measurements/nvidia-h200/logs/$CALL && rm -rf $L
