#!/usr/bin/env bash
# Session 20, call 5 on a fresh start (carry .carry .whl/common .whl/cu13): the stand-in release step of call 4
# (cuda-core 0.5.1 -> main's cb56ab9f9, 23 regressions on start a0d69063) measured again on another start with
# `scripts/bench steps --recheck`, on a copy of results/ that holds that step; what it adds comes back under
# check-s20/ladder-new/recheck-new.jsonl. One start is not enough (docs/measurement.md): this one confirms
# each flag or does not reproduce it.
CALL=session20-recheck; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s20/ladder-new
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
H=/tmp/history-copy; rm -rf $H; cp -a results $H
cat $K/steps-new.jsonl >> $H/nvidia-h200/steps.jsonl; cp $K/cb56ab9f-*BINDINGSauto*.json $H/nvidia-h200/
git --git-dir=$R tag cuda-core-v0.6.0 cb56ab9f9ae3b4a0ef19666697336945925589a5
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 2 cuda-core-v0.5.1 cb56ab9f9ae3b4a0ef19666697336945925589a5
job recheck steps --recheck --results-dir $H
grep -E "^bench: |->" $L/recheck.log | tail -40
diff <(cat results/nvidia-h200/steps.jsonl $K/steps-new.jsonl) $H/nvidia-h200/steps.jsonl | sed -n 's/^> //p' > $K/recheck-new.jsonl
wc -l $K/recheck-new.jsonl
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz $K measurements/nvidia-h200/logs/$CALL && rm -rf $L
