#!/usr/bin/env bash
# Session 8, call 2 (cuda-bindings 13.3.1; carry .carry .whl/common .whl/cu13): the paired engine with the
# unrolled body. A/A (same build; a comment-only rebuild) -> thresholds (the old body's calibration is
# dropped), main vs an injected slowdown of Device.set_current, then Python over C++ at main.
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=/tmp/logs; mkdir -p $L; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
W=.whl/common:.whl/cu13
P=45; T=0.1
t0=$(date +%s)
job() {  # job NAME ARGS...
  local name=$1; shift; local t1=$(date +%s)
  scripts/offline_run.sh $W $R $S $L "$@" > $L/$name.log 2>&1
  echo "== $name: rc=$? $(( $(date +%s) - t1 )) s: $*"
  grep -E "^\*\*|Controls|summary.json|calibration:|over C++:|Not measured" $L/$name.log | tail -6
  grep -A12 "#### Regressions\|#### Improvements\|#### Not measured" $L/$name.log | grep "^| \`\|^- \`" | head -12
  mkdir -p $M/logs/session8-call2; cp $L/$name.log $M/logs/session8-call2/; tar -czf $O/bundle.tar.gz measurements results
}
rm -f results/nvidia-h200/calibration.jsonl
rm -rf $M/paired-aa-* $M/paired-injected-*
CUDA_BENCH_BINDINGS=13.3.1 job prebuild prebuild main bench-null bench-inject-spin24
job aa aa main --pairs $P --seconds $T --out $M/paired-aa-cb56ab9f9
job aabuild aa main --against bench-null --pairs $P --seconds $T --out $M/paired-aa-rebuild-075fdef02
job spin24 compare main bench-inject-spin24 --kind injected --expected "bench_device.SetCurrent.time_set_current('core')" --pairs $P --seconds $T --out $M/paired-injected-spin24
job overhead overhead main --out $M/overhead-cb56ab9f9-run1
grep "^| \`" $M/overhead-cb56ab9f9-run1/overhead.md | head -70
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
