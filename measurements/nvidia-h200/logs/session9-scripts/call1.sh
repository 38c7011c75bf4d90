#!/usr/bin/env bash
# Session 9, call 1 (cuda-bindings 13.3.1; carry .carry .whl/common .whl/cu13): the suite with a 100-call body.
# Build every commit of the session at once; A/A (same build) -> thresholds (the 10-call body's calibration
# is dropped), main vs an injected slowdown of Device.set_current, Python over C++ at main (60 processes,
# first of two runs), then an A/A against a comment-only rebuild if the call has time left.
CALL=session9-call1; source measurements/nvidia-h200/logs/session9-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
rm -f results/nvidia-h200/calibration.jsonl
rm -rf $M/paired-aa-* $M/paired-injected-spin24
# eight distinct cuda_core trees (db347c90 and c278ecb3 share theirs with 270be80a and cb56ab9f), 2 jobs each
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 8 \
  270be80a393eae02eea9faff8c634f0efbf14aa4 76bac4e1186a1c035a006d3f2dec679690bc9984 \
  cb56ab9f9ae3b4a0ef19666697336945925589a5 018b852c6b059dc10aae69363b66ff47198686ac \
  075fdef02e4f6bda4ef1079d2992819495196aaa b1acdb2fdcf28aa1396df38e8bc4f3037454c9e2 \
  3c307b40fc78dc0be07e7fb3724ad728a3971c27 73f808a6d7588a981fb33b7ad9b17ccb4ce014ca
job aa aa main --out $M/paired-aa-cb56ab9f9
job spin24 compare main bench-inject-spin24 --kind injected --expected "bench_device.SetCurrent.time_set_current('core')" --out $M/paired-injected-spin24
job overheadA overhead main --pairs 60 --out $M/overhead-cb56ab9f9-s9a
[ $(( $(date +%s) - t0 )) -lt 470 ] && job aabuild aa main --against bench-null --out $M/paired-aa-rebuild-075fdef02
tail -4 $L/apis.txt > $M/logs/$CALL/apis-tail.txt 2>/dev/null
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
