#!/usr/bin/env bash
# Session 11, call 1 (carry .carry .whl/common .whl/cu13): does a memory layout per process make over C++
# agree across machine starts? Two runs with ASLR on (--layouts random) and one as before (fixed), at main,
# on this machine start (call 3 repeats them on another start); `python -m cuda_bench.report --agreement`
# compares them with sessions 9 and 10's fixed-layout runs. Then asv's C++ twins (bench_cpp's new version)
# at main's five commits, as far as the call's time goes (call 2 finishes them).
CALL=session11-call1; source measurements/nvidia-h200/logs/session10-scripts/head.sh  # the session 10 helper, as it ran
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
# main's five commits have three distinct cuda_core trees (db347c90 and c278ecb3 share theirs with 270be80a and cb56ab9f)
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 6 cb56ab9f9ae3b4a0ef19666697336945925589a5 \
  270be80a393eae02eea9faff8c634f0efbf14aa4 76bac4e1186a1c035a006d3f2dec679690bc9984
job randomA overhead main --layouts random --out $M/overhead-cb56ab9f9-s11-randomA
job fixed overhead main --out $M/overhead-cb56ab9f9-s11-fixed
job randomB overhead main --layouts random --out $M/overhead-cb56ab9f9-s11-randomB
printf '%s\n' cb56ab9f9ae3b4a0ef19666697336945925589a5 c278ecb3d2f7473e483c5f5e9ef2f8e117505664 \
  76bac4e1186a1c035a006d3f2dec679690bc9984 db347c90533cd7d74666873226281e6d59811621 \
  270be80a393eae02eea9faff8c634f0efbf14aa4 > /tmp/main5.txt
left=$(( 575 - ($(date +%s) - t0) ))
[ $left -gt 60 ] && W=$W timeout $left bash -c "$(declare -f job); $(declare -p W R S L M O C t0 CALL); job cpp HASHFILE:/tmp/main5.txt -b bench_cpp --no-steps --no-overhead --no-publish"
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
