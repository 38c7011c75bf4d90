#!/usr/bin/env bash
# Session 10, call 2 (carry .carry-cu12 .whl/common .whl/cu12): the release ladder's CUDA 12 half with the
# 100-call body: cuda-core 0.1.0, 0.1.1, 0.2.0 (bindings 12.9.10, NVRTC 12 from the carried tarball).
# Run twice: the first run (logs/session10-call2) measured 0.2.0; 0.1.x failed to build because the wheel
# folder lacked the cuda-python 12.9.10 metapackage they depend on. The second run (call2b) is the 0.1.x half.
CALL=session10-call2b; source measurements/nvidia-h200/logs/session10-scripts/head.sh
R=$PWD/.carry-cu12/cuda-python.git; W=.whl/common:.whl/cu12
[ -d $C/cuda-headers-12.9 ] || { mkdir -p $C/cuda-headers-12.9 && tar -xJf .carry-cu12/cuda-headers-12.9.tar.xz -C $C/cuda-headers-12.9; }
mkdir -p /tmp/nvrtc12 && tar -xJf .carry-cu12/nvrtc12.tar.xz -C /tmp/nvrtc12 && export LD_LIBRARY_PATH=/tmp/nvrtc12/nvidia/cuda_nvrtc/lib
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 2 cuda-core-v0.1.0 cuda-core-v0.1.1
job ladder12 ladder --tags 'cuda-core-v(0\.1\.0|0\.1\.1)$' --no-steps --no-overhead --no-publish
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
