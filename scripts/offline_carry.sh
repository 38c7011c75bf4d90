#!/usr/bin/env bash
# What a GPU box without network needs for the CUDA 13 commits (main and cuda-core >= 0.3.2), made on a
# machine with network, in ignored folders to copy to the GPU box (docs/guide.md, "A GPU box without network"):
#
#   .whl/common                       asv and its dependencies, asv_runner, cuda_core's build requirements,
#                                     cuda-pathfinder
#   .whl/cu13                         the cuda-bindings 13.3.1 wheel (for --bindings 13.3.1; a call that builds
#                                     cuda_bindings from each commit leaves it behind)
#   .whl/cupti                        cupti-python and nvidia-cuda-cupti of CUDA $CUPTI_CUDA (default 13.0, the
#                                     driver's CUDA version: CUPTI newer than the driver does not start), with
#                                     which the counting pass counts CUDA calls (cuda-bench counts --cupti)
#   .carry/cuda-python.git            scripts/shallow_clone.sh of SOURCE: main's newest DEPTH commits, the tags
#   .carry/cuda-headers-13.3.tar.xz   CUDA 13.3's headers (the cuda-toolkit wheels), for the cache the build
#                                     looks in (~/.cache/cuda-python-bench/cuda-headers-13.3)
#   .carry/valgrind.tar.xz            valgrind with its callgrind tool alone, from Debian's package (apt-get download
#                                     valgrind, dpkg -x: 0.9 MiB of its 14), which counts instructions per call
#                                     (offline_run.sh unpacks it and sets VALGRIND_LIB); needs a Debian or Ubuntu host
#
#   .carry/wheels                     with PREBUILT="REV ...": the wheel cache entries those commits' environments take
#                                     (cuda-bindings from source: prebuild them here first, with the Python the GPU
#                                     box runs, PYTHON, default python3.12), which offline_run.sh puts in its cache
#
#   scripts/offline_carry.sh [SOURCE] [DEPTH]      # SOURCE: a URL or a local clone (default: GitHub)
#
# With CUDA12=1 it also makes what the CUDA 12 releases (cuda-core 0.1.0 ... 0.2.0, the release ladder's first
# steps) need, 37 MiB more:
#
#   .whl/cu12                         cuda-bindings 12.9.10, the cuda-python 12.9.10 metapackage (0.1.x
#                                     installs it), cuda-pathfinder
#   .carry-cu12/nvrtc12.tar.xz        NVRTC 12.9 (libnvrtc.so.12 and its builtins; the box has NVRTC 13 only)
#   .carry-cu12/cuda-headers-12.9.tar.xz   CUDA 12.9's headers, for ~/.cache/cuda-python-bench/cuda-headers-12.9
#
# Then scripts/inject_spin.sh .carry/cuda-python.git N adds a known slowdown to test the method with. The sizes
# are printed at the end.
set -euo pipefail
source=${1:-https://github.com/NVIDIA/cuda-python.git}; depth=${2:-8}
root=$(cd "$(dirname "$0")/.." && pwd); cd "$root"
pip=(python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --python-version 3.12
     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform any)
step() { echo "offline_carry: $*" >&2; }

step "wheels for the tool and the builds -> .whl/common"
"${pip[@]}" -d .whl/common asv==0.6.6 asv_runner==0.2.5 "importlib-metadata<8.8" json5 tabulate virtualenv \
    pympler build wheel "setuptools>=80" "setuptools-scm>=8" "Cython>=3.2,<3.3" pyclibrary
"${pip[@]}" --no-deps -d .whl/common "cuda-pathfinder>=1.5,<2"
step "cuda-bindings 13.3.1 -> .whl/cu13"
"${pip[@]}" --no-deps -d .whl/cu13 cuda-bindings==13.3.1
cupti_cuda=${CUPTI_CUDA:-13.0}
step "cupti-python and nvidia-cuda-cupti of CUDA $cupti_cuda -> .whl/cupti"
"${pip[@]}" --platform manylinux_2_25_x86_64 --platform manylinux2014_x86_64 --no-deps -d .whl/cupti \
    "cupti-python==$cupti_cuda.*" "nvidia-cuda-cupti==$cupti_cuda.*"

mkdir -p .carry
if [ -d .carry/cuda-python.git ]; then
    step ".carry/cuda-python.git exists: kept (remove it to clone again)"
else
    step "a shallow clone of $source -> .carry/cuda-python.git"
    scripts/shallow_clone.sh "$source" .carry/cuda-python.git "$depth"
fi

step "CUDA 13.3 headers (cuda-toolkit wheels) -> .carry/cuda-headers-13.3.tar.xz"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 -m pip install -q --disable-pip-version-check --target "$tmp" \
    "cuda-toolkit[cudart,crt,profiler,nvrtc,cufile]==13.3.*"
if [ ! -f "$tmp/nvidia/cu13/include/nvrtc.h" ]; then
    echo "offline_carry: no nvrtc.h in the cuda-toolkit 13.3 wheels" >&2; exit 1
fi
# headers and the static runtime only: the shared libraries come from the GPU box's own CUDA
tar -cJf .carry/cuda-headers-13.3.tar.xz -C "$tmp" nvidia/cu13/include \
    $(cd "$tmp" && ls nvidia/cu13/lib/libcudart_static.a 2>/dev/null)

step "valgrind's callgrind (Debian's package) -> .carry/valgrind.tar.xz"
vg=$(mktemp -d); trap 'rm -rf "$tmp" "$vg"' EXIT
if (cd "$vg" && apt-get download -q valgrind >/dev/null) && dpkg -x "$vg"/valgrind_*.deb "$vg/root"; then
    lib=usr/libexec/valgrind
    tar -cJf .carry/valgrind.tar.xz -C "$vg/root" usr/bin/valgrind usr/bin/valgrind.bin \
        "$lib/callgrind-amd64-linux" "$lib/vgpreload_core-amd64-linux.so" "$lib/default.supp"
else
    echo "offline_carry: no valgrind package (apt-get download valgrind, on a Debian or Ubuntu host): the box" \
         "counts no instructions" >&2
fi

if [ -n "${PREBUILT:-}" ]; then
    step "prebuilt wheel cache entries of $PREBUILT -> .carry/wheels"
    PYTHONPATH="$root" CUDA_BENCH_BINDINGS=${CUDA_BENCH_BINDINGS:-source} "${PYTHON:-python3.12}" -m cuda_bench.build \
        carry .carry/cuda-python.git .carry/wheels $PREBUILT
fi

if [ "${CUDA12:-0}" = 1 ]; then
    step "cuda-bindings 12.9.10, cuda-python 12.9.10 and cuda-pathfinder -> .whl/cu12"
    "${pip[@]}" --platform manylinux_2_24_x86_64 --no-deps -d .whl/cu12 cuda-bindings==12.9.10 cuda-python==12.9.10 \
        "cuda-pathfinder>=1.5,<2"
    step "NVRTC 12.9 and CUDA 12.9's headers (cuda-toolkit wheels) -> .carry-cu12"
    tmp12=$(mktemp -d); trap 'rm -rf "$tmp" "$vg" "$tmp12"' EXIT
    python3 -m pip install -q --disable-pip-version-check --target "$tmp12" \
        "cuda-toolkit[cudart,crt,profiler,nvrtc,cufile]==12.9.*"
    # CUDA 12's wheels keep each component in its own tree: one CUDA_HOME-shaped tree, as the build makes it
    PYTHONPATH="$root" python3 -c "import sys; from pathlib import Path; from cuda_bench.build.toolkit import merge_components
root = Path(sys.argv[1]); merge_components(root, root / 'nvidia' / 'cu12')" "$tmp12"
    mkdir -p .carry-cu12
    tar -cJf .carry-cu12/cuda-headers-12.9.tar.xz -C "$tmp12" nvidia/cu12/include \
        $(cd "$tmp12" && ls nvidia/cu12/lib/libcudart_static.a 2>/dev/null)
    builtins=$(cd "$tmp12" && compgen -G "nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.*" || true)
    if [ -z "$builtins" ] || [ ! -f "$tmp12/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ]; then
        echo "offline_carry: no libnvrtc.so.12 or its builtins in the cuda-toolkit 12.9 wheels" >&2; exit 1
    fi
    XZ_OPT=-9 tar -cJf .carry-cu12/nvrtc12.tar.xz -C "$tmp12" nvidia/cuda_nvrtc/lib/libnvrtc.so.12 $builtins
    du -sh .whl/cu12 .carry-cu12/*
fi

du -sh .whl/common .whl/cu13 .whl/cupti .carry/cuda-python.git .carry/cuda-headers-13.3.tar.xz \
    $([ -f .carry/valgrind.tar.xz ] && echo .carry/valgrind.tar.xz) $([ -d .carry/wheels ] && echo .carry/wheels)
echo "offline_carry: in all $(du -scm .whl/common .whl/cu13 .whl/cupti .carry | tail -1 | cut -f1) MiB"
