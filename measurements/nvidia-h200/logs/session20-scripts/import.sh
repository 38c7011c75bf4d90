#!/usr/bin/env bash
# Session 20, call 9 on a fresh start (carry .carry .whl/common .whl/cu13): is it importing main's cuda.core, and
# its timing, that slows cuda.bindings' pointer launches (isolate.sh)? Build main's wheels (prebuild), unpack
# cuda-core (main), cuda-bindings 13.3.1 and cuda-pathfinder into one folder, then run import_probe.py as
# none / early / late, alternated for ROUNDS rounds, each process pinned to core 3 with ASLR off.
CALL=session20-import; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; D=$M/check-s20/import-probe; ROUNDS=${ROUNDS:-6}
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"
job prebuild prebuild --parallel 1 main
core=$(find $C -name 'cuda_core-1.2.0*.whl' | head -1); echo "cuda-core wheel: $core"
P=/opt/torch/.venv/bin/python; T=/tmp/import-probe; rm -rf $T; mkdir -p $D
for w in $core .whl/cu13/cuda_bindings-13.3.1-*.whl .whl/cu13/cuda_pathfinder-*.whl; do $P -m zipfile -e $w $T; done
for r in $(seq $ROUNDS); do
  for m in none early late; do
    PYTHONPATH=$T taskset -c 3 setarch -R $P measurements/nvidia-h200/logs/session20-scripts/import_probe.py $m 2 \
      >> $O/import-probe.jsonl 2>> $O/import-probe.err
  done
  echo "round $r: $(tail -3 $O/import-probe.jsonl | tr '\n' ' ')"
done
cp $O/import-probe.jsonl $O/import-probe.err $D/
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz $D measurements/nvidia-h200/logs/$CALL && rm -rf $L
