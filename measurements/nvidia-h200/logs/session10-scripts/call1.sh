#!/usr/bin/env bash
# Session 10, call 1 (carry .carry .whl/common .whl/cu13): build main's head and the CUDA 13 releases at once,
# then the release ladder's CUDA 13 half with the 100-call body: cuda-core 0.3.2, 0.4.2, 0.5.1 (bindings 13.3.1).
CALL=session10-call1; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
[ -d $C/cuda-headers-13.3 ] || { mkdir -p $C/cuda-headers-13.3 && tar -xJf .carry/cuda-headers-13.3.tar.xz -C $C/cuda-headers-13.3; }
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 4 cb56ab9f9ae3b4a0ef19666697336945925589a5 \
  b1acdb2fdcf28aa1396df38e8bc4f3037454c9e2 3c307b40fc78dc0be07e7fb3724ad728a3971c27 73f808a6d7588a981fb33b7ad9b17ccb4ce014ca
job ladder13 ladder --tags 'cuda-core-v(0\.3\.2|0\.4\.2|0\.5\.1)$' --no-steps --no-overhead --no-publish
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
