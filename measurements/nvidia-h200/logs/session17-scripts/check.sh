#!/usr/bin/env bash
# Session 17 (2026-12-04 again: no cross-day run possible): does the code as it stands after session 16's
# review (25 commits, no GPU run) still do its jobs on the H200? Carry .carry .whl/common .whl/cu13.
#   bash check.sh engine   prebuild main, its parent and bench-inject-spin96 in parallel; the paired engine on
#                          the known slowdown (a fixed spin in Device.set_current): it must flag that case alone
#   bash check.sh run      the main job, scripts/bench run (offline_run's default range, HEAD^!), into a copy of results/ (not the history:
#                          it re-measures cb56ab9f9, which results/ already holds): asv run, the paired step from
#                          the parent, the over-C++ run; the copy's new records come back under measurements/
#   bash check.sh aa       A/A of the same build over the whole suite, judged held out by the recorded thresholds
#   bash check.sh prebuild-steps, then at once (the warm machine keeps the wheel cache) bash check.sh steps:
#                          scripts/bench steps, the three steps between main's five measured commits that the
#                          history lacks (session 9 ran asv with --no-steps), into results/. As run in session
#                          17 the bundle left results/ out (since fixed below) and the prebuild built from source
#                          (prebuild's old default): the three steps' records were lost; their log is kept
# SESSION=session18 bash check.sh steps: logs go to logs/session18-steps, not over session 17's
CALL=${SESSION:-session17}-$1; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s17
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
case $1 in
engine)
  job prebuild prebuild --parallel 3 main main^ bench-inject-spin96
  job compare-spin96 compare main bench-inject-spin96 --kind injected \
    --expected "bench_device.SetCurrent.time_set_current('core')" -b "SetCurrent|CurrentDevice" --out $K/paired-injected-spin96
  ;;
run)
  H=/tmp/history-copy; rm -rf $H; cp -a results $H
  job run --results-dir $H HEAD^!
  mkdir -p $K/run; for f in $H/nvidia-h200/*; do cmp -s $f results/nvidia-h200/$(basename $f) || cp $f $K/run/; done
  for f in steps overhead; do diff <(cat results/nvidia-h200/$f.jsonl) $H/nvidia-h200/$f.jsonl | sed -n 's/^> //p' > $K/run/$f-new.jsonl; done
  ls -la $K/run
  ;;
prebuild-steps)
  job prebuild-steps prebuild --parallel 4 270be80a3 db347c905 76bac4e11 c278ecb3d
  ;;
steps)
  job steps steps
  ;;
aa)
  job aa compare main main --kind aa --out $K/paired-aa-cb56ab9f9-s17
  ;;
esac
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L  # results too: `steps` writes there
