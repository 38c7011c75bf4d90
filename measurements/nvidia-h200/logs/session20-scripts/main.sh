#!/usr/bin/env bash
# Session 20, call 1 on a fresh machine start (carry .carry .whl/common .whl/cu13): still 2026-12-04, so no
# cross-day run; the main job on the code as it stands (scripts/bench run, offline_run's default HEAD^!) into a
# copy of results/, as sessions 17-19 did; the copy's new records come back under check-s20/run.
CALL=session20-main; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s20
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
H=/tmp/history-copy; rm -rf $H; cp -a results $H
job run --results-dir $H HEAD^!
mkdir -p $K/run; for f in $H/nvidia-h200/*; do cmp -s $f results/nvidia-h200/$(basename $f) || cp $f $K/run/; done
for f in steps overhead; do diff <(cat results/nvidia-h200/$f.jsonl) $H/nvidia-h200/$f.jsonl | sed -n 's/^> //p' > $K/run/$f-new.jsonl; done
rm -f $K/run/steps.jsonl $K/run/overhead.jsonl; ls -la $K/run
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz $K measurements/nvidia-h200/logs/$CALL && rm -rf $L
