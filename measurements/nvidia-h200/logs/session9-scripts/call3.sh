#!/usr/bin/env bash
# Session 9, call 3 (carry as call 1, same machine): the release ladder's CUDA 13 half, cuda-core 0.3.2,
# 0.4.2 and 0.5.1 (CUDA_BENCH_BINDINGS=auto: 13.3.1).
CALL=session9-call3; source measurements/nvidia-h200/logs/session9-scripts/head.sh
R=$PWD/.carry/cuda-python.git; W=.whl/common:.whl/cu13
job ladder13 ladder --tags 'cuda-core-v(0\.3\.2|0\.4\.2|0\.5\.1)$' --no-steps --no-overhead
echo "total $(( $(date +%s) - t0 )) s"
tar -czf $O/bundle.tar.gz measurements results
