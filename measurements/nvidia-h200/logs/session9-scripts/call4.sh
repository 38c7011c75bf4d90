#!/usr/bin/env bash
# Session 9, call 4 (cuda-bindings 12.9.10; carry .carry-cu12 .whl/common .whl/cu12): the release ladder's
# CUDA 12 half, cuda-core 0.1.0, 0.1.1 and 0.2.0, from a clone of those three tags.
CALL=session9-call4; source measurements/nvidia-h200/logs/session9-scripts/head.sh
R=$PWD/.carry-cu12/cuda-python.git; W=.whl/common:.whl/cu12
mkdir -p $C/cuda-headers-12.9 && tar -xJf .carry-cu12/cuda-headers-12.9.tar.xz -C $C/cuda-headers-12.9
mkdir -p /tmp/nvrtc12 && tar -xJf .carry-cu12/nvrtc12.tar.xz -C /tmp/nvrtc12 && export LD_LIBRARY_PATH=/tmp/nvrtc12/nvidia/cuda_nvrtc/lib
CUDA_BENCH_BINDINGS=auto job prebuild prebuild --parallel 3 \
  72acaaf0ae3ce2e82322b13b4a9e79bb45490eab 4135a2f7657ec1463acecaac7d8480f028919b04 111c71329b4e109bcfdc71a9557314bce8ad6638
job ladder12 ladder --tags 'cuda-core-v(0\.1\.0|0\.1\.1|0\.2\.0)$' --no-steps --no-overhead
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
