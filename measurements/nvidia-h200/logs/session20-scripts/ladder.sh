#!/usr/bin/env bash
# Session 20, call 4 on a fresh start (carry .carry .whl/common .whl/cu13): `scripts/bench ladder --new`, the
# nightly job's new step, on the GPU, into a copy of results/ (check-s20/ladder-new keeps what it added).
# 1. As the history stands (six releases measured, 0.5.1 the newest): it must run nothing and exit 0.
# 2. With a stand-in release: main's head (cb56ab9f9) tagged cuda-core-v0.6.0 in the carried clone only (the
#    fork has no release after 0.5.1). It must run asv on that commit alone, in the ladder's environment, then
#    pair it with 0.5.1: the paired step from the newest release to main. Not a real release, so its records
#    stay out of the history.
# Run again after the review (call 6, a third start: release_chain pairs the releases, not new_steps):
# CALL=session20-ladder2 OUTNAME=ladder-new-2 bash ladder.sh
CALL=${CALL:-session20-ladder}; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s20/${OUTNAME:-ladder-new}
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
H=/tmp/history-copy; rm -rf $H; cp -a results $H
job ladder-none ladder --new --results-dir $H --no-publish --no-overhead
tail -2 $L/ladder-none.log
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 2 cuda-core-v0.5.1 cb56ab9f9ae3b4a0ef19666697336945925589a5
git --git-dir=$R tag cuda-core-v0.6.0 cb56ab9f9ae3b4a0ef19666697336945925589a5
job ladder-new ladder --new --results-dir $H --no-publish --no-overhead
grep -E "ladder|step|regression" $L/ladder-new.log | grep -v "^·" | tail -30
mkdir -p $K; for f in $H/nvidia-h200/*; do cmp -s $f results/nvidia-h200/$(basename $f) || cp $f $K/; done
diff <(cat results/nvidia-h200/steps.jsonl) $H/nvidia-h200/steps.jsonl | sed -n 's/^> //p' > $K/steps-new.jsonl
rm -f $K/steps.jsonl; ls -la $K
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz $K measurements/nvidia-h200/logs/$CALL && rm -rf $L
