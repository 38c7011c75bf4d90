#!/usr/bin/env bash
# Session 9, call 2 (carry as call 1, same machine): asv at main's five newest commits (no steps, no over C++:
# call 1 measured it), then Python over C++ at main again (second run of 60 processes).
CALL=session9-call2; source measurements/nvidia-h200/logs/session9-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
printf '%s\n' 270be80a393eae02eea9faff8c634f0efbf14aa4 db347c90533cd7d74666873226281e6d59811621 \
  76bac4e1186a1c035a006d3f2dec679690bc9984 c278ecb3d2f7473e483c5f5e9ef2f8e117505664 \
  cb56ab9f9ae3b4a0ef19666697336945925589a5 > /tmp/main5.txt
job asv HASHFILE:/tmp/main5.txt --no-steps --no-overhead
job overheadB overhead main --pairs 60 --out $M/overhead-cb56ab9f9-s9b
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
