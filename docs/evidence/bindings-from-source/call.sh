#!/usr/bin/env bash
# One call of a GPU machine without network: as much of `cuda-bench plan` as fits in BUDGET minutes, from the offline
# carry (scripts/offline_carry.sh with PREBUILT=...), cuda_bindings built from each commit; what it made goes to $OUT.
#
#   docs/evidence/bindings-from-source/call.sh BUDGET [plan options]
set -uo pipefail
cd "$(dirname "$0")/../../.."
budget=$1; shift
out=${OUT:?OUT: the folder that comes back}
site=/opt/torch/.venv/lib/python3.12/site-packages
scripts/offline_run.sh .whl/common .carry/cuda-python.git "$site" "$out" plan --run --budget "$budget" \
    --out "$out/plan.json" "$@"
status=$?
# each step's summary.json (its cases, and where its time went), the counting passes' tables
tar -czf "$out/steps.tar.gz" $(ls -d .asv/steps/*/summary.json .asv/counts/*/counts.json 2>/dev/null)
exit "$status"
