# Sourced by the session 10 call scripts (and session 11's, prepared): paths and the job helper (each call's own lines follow in callN.sh).
# Logs and offline_run's periodic results.tar.gz go straight under $OUT, so a call killed at its limit still
# returns them.
set -u
export PYTHONUNBUFFERED=1
O=$OUT; L=$OUT/logs; mkdir -p $L; M=measurements/nvidia-h200; S=/opt/torch/.venv/lib/python3.12/site-packages
C=~/.cache/cuda-python-bench
t0=$(date +%s)
job() {  # job NAME ARGS...: scripts/offline_run.sh ARGS, its log kept, results and measurements bundled
  local name=$1; shift; local t1=$(date +%s)
  scripts/offline_run.sh $W $R $S $L "$@" > $L/$name.log 2>&1
  echo "== $name: rc=$? $(( $(date +%s) - t1 )) s (at $(( $(date +%s) - t0 )) s): $*"
  grep -E "^\*\*|Controls|summary.json|calibration:|over C++:|Not measured|Running [0-9]+ total|failed|ladder " $L/$name.log | tail -6
  mkdir -p $M/logs/$CALL; cp $L/$name.log $M/logs/$CALL/; tar -czf $O/bundle.tar.gz measurements results
}
