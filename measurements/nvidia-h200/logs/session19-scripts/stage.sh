#!/usr/bin/env bash
# Session 19, the first call on a machine start (carry .carry-cu12: NVRTC 12 and the CUDA 12.9 headers, 31 MiB):
# unpack them where the next call on the same warm machine finds them (/tmp/nvrtc12, the build's header cache).
# A call carries 64 MiB with the working tree (28 MiB now), and NVRTC 12 alone is 30 MiB, so the CUDA 12 half
# of the release ladder's steps cannot travel with the wheels and the clone in one call; ladder.sh follows.
set -eu
C=~/.cache/cuda-python-bench
mkdir -p /tmp/nvrtc12 $C/cuda-headers-12.9
tar -xJf .carry-cu12/nvrtc12.tar.xz -C /tmp/nvrtc12
tar -xJf .carry-cu12/cuda-headers-12.9.tar.xz -C $C/cuda-headers-12.9
ls -la /tmp/nvrtc12/nvidia/cuda_nvrtc/lib $C/cuda-headers-12.9/nvidia/cu12
echo "start $(cat /proc/sys/kernel/random/boot_id) $(date -u +%FT%TZ)"; nvidia-smi -L
