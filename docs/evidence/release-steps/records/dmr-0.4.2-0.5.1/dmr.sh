#!/usr/bin/env bash
# On the H200 (wheels in .whl/cu13 and .whl/dmr): DeviceMemoryResource(0) taken apart in cuda-core 0.4.2 and
# 0.5.1 (PyPI wheels, with cuda-bindings 13.3.1): profile_dmr.py (beside this script) with each release's wheels
# first on the system Python's path, alternated three times, pinned to one core with ASLR off.
t0=$(date +%s)
D=$(cd "$(dirname "$0")" && pwd)
P=/opt/torch/.venv/bin/python
for v in 0.4.2 0.5.1; do  # the system Python (numpy), with this release's cuda packages first on sys.path
  for w in .whl/dmr/cuda_core-$v-*.whl .whl/cu13/cuda_bindings-13.3.1-*.whl .whl/cu13/cuda_pathfinder-*.whl; do
    $P -m zipfile -e $w /tmp/dmr-$v || echo "unpacking $w failed"  # a wheel is a zip of what pip would install
  done
done
for round in 1 2 3; do
  for v in 0.4.2 0.5.1; do
    PYTHONPATH=/tmp/dmr-$v taskset -c 3 setarch -R $P $D/profile_dmr.py \
      > $D/round$round-$v.jsonl 2> $D/round$round-$v.err; echo "dmr $v round $round: rc=$?"; tail -3 $D/round$round-$v.err
  done
done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz $D measurements/nvidia-h200/logs/$CALL && rm -rf $L
