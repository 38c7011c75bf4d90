#!/usr/bin/env bash
# Session 8, call 4 (cuda-bindings 13.3.1; carry .carry .whl/common .whl/cu13): Python over C++ at main again
# (second run, a fresh machine: the stability check), then asv run of main's head with the unrolled body.
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=/tmp/logs; mkdir -p $L; M=measurements/nvidia-h200; R=$PWD/.carry/cuda-python.git; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
W=.whl/common:.whl/cu13
t0=$(date +%s)
job() {  # job NAME ARGS...
  local name=$1; shift; local t1=$(date +%s)
  scripts/offline_run.sh $W $R $S $L "$@" > $L/$name.log 2>&1
  echo "== $name: rc=$? $(( $(date +%s) - t1 )) s: $*"
  grep -E "over C++:|Not measured|asv: |Floor|noop" $L/$name.log | tail -6
  mkdir -p $M/logs/session8-call4; cp $L/$name.log $M/logs/session8-call4/; tar -czf $O/bundle.tar.gz measurements results
}
CUDA_BENCH_BINDINGS=13.3.1 job prebuild prebuild main
job overhead overhead main --out $M/overhead-cb56ab9f9-run2
grep "^| \`" $M/overhead-cb56ab9f9-run2/overhead.md | grep -c .
job asv main^! --no-steps
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
