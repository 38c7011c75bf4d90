#!/usr/bin/env bash
# Session 18, with the device time left: is the flag of 76bac4e11 -> c278ecb3d on ProgramOptionsCreate('core')
# a property of the machine start (then two runs on one start agree with each other, flag or no flag) or of
# the run? Two identical compares of the case and the floor, one after the other on one start; the start's
# speed state is in their per-call times (2.5 us on the start that flagged, 4.3-5.3 us on the two that did
# not). Carry .carry (main, depth 3 is enough) .whl/common .whl/cu13.
CALL=session18-samestart; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13; K=$M/check-s18
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
PYTHONPATH=. python3 -c "from cuda_bench import machine; h = machine.host(); print('start', h['boot'], h['boot_id'])"
for n in 1 2; do
  job same$n compare 76bac4e11 c278ecb3d -b "ProgramOptionsCreate|Floor" --out $K/paired-step-c278ecb3d-samestart-$n
done
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results && rm -rf $L
