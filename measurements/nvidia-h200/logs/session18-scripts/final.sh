#!/usr/bin/env bash
# Session 18, last call: the code as it lands (the recheck's review fixes, steps recording their bindings,
# machine.host's boot id), on the GPU. Carry .carry .whl/common .whl/cu13.
#   the machine start's identity as the records will hold it
#   the main job (scripts/bench run, offline_run's default range HEAD^!) into a copy of results/, as session
#   17's check did: asv run of cb56ab9f9, the paired step from c278ecb3d (now with its bindings), over C++;
#   the copy's new records come back under check-s18/run (the history keeps the recorded ones)
#   steps --recheck --list on the history: nothing left to recheck (the one flag is not reproduced)
CALL=session18-final; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s18
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
PYTHONPATH=. python3 -c "from cuda_bench import machine; h = machine.host(); print('start', h['boot'], h['boot_id'])"
H=/tmp/history-copy; rm -rf $H; cp -a results $H
job run --results-dir $H HEAD^!
mkdir -p $K/run; for f in $H/nvidia-h200/*; do cmp -s $f results/nvidia-h200/$(basename $f) || cp $f $K/run/; done
for f in steps overhead; do diff <(cat results/nvidia-h200/$f.jsonl) $H/nvidia-h200/$f.jsonl | sed -n 's/^> //p' > $K/run/$f-new.jsonl; done
ls -la $K/run
job recheck-list steps --recheck --list
tail -2 $L/recheck-list.log
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
