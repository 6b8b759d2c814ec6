#!/usr/bin/env bash
# The Python experiment beside feedline, on this machine, in one run: the Python ladder (loader alone, then
# training) and `feedline bench` with the same data, subset and epochs, then both ladders side by side.
#   scripts/compare-python.sh [--dataset fashion-mnist] [--format csv] [--epochs 1] [--train-limit 20000]
#                             [--test-limit 5000] [--loader-epochs 2] [--threads N] [--out results/compare]
#                             [--skip-loader] [--python-rungs 6,7]
# The defaults are feedline bench's own (its ladder: 1 epoch on the first 20,000/5,000 samples; its loader
# ladder: 2 epochs of the whole train split), so the two sides run the same protocol. --skip-loader leaves out
# both loader ladders; --python-rungs runs only those rungs of the Python ladder (numbered from 1: 1-5 are the
# naive dataset's, 6 and 7 the pre-decoded one's, the experiment's best and its no-worker twin; 8 and 9
# feedline.DataLoader over the same tensors, with 2 workers and none, 10 over uint8 images; 11 the compute floor).
# --threads goes to both sides (default: every core). On a machine busy with other work, --threads 1 avoids
# PyTorch's OpenMP threads spinning against it, which can make a small step many times slower.
# OpenBLAS runs 1 thread per call on both sides (feedline's default), unless OPENBLAS_NUM_THREADS is set.
# Environment: FEEDLINE_BIN (default build/feedline), FEEDLINE_PYTHON (a Python with torch and pandas).
# Needs Python with PyTorch and pandas: Debian's python3-torch and python3-pandas are installed when missing.
# pandas reads Parquet only with pyarrow (not in Debian), so the Python side reads CSV unless told otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

dataset=fashion-mnist format=csv epochs=1 train_limit=20000 test_limit=5000 loader_epochs=2 threads=$(nproc) out=results/compare
skip_loader=0 python_rungs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dataset) dataset=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --train-limit) train_limit=$2; shift 2 ;;
    --test-limit) test_limit=$2; shift 2 ;;
    --loader-epochs) loader_epochs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --skip-loader) skip_loader=1; shift ;;
    --python-rungs) python_rungs=(--rungs "$2"); shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare-python.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$dataset" in
  fashion-mnist) folder=FashionMNIST ;;
  mnist) folder=MNIST ;;
  *) echo "compare-python.sh: --dataset must be mnist or fashion-mnist, not '$dataset'" >&2; exit 2 ;;
esac
case "$format" in csv|parquet) ;; *) echo "compare-python.sh: --format must be csv or parquet" >&2; exit 2 ;; esac

# A Python that can import torch and pandas: FEEDLINE_PYTHON, else Debian's (python3 on PATH may be a pyenv or
# venv Python without torch), else whatever python3 is.
find_python() {
  local candidate
  for candidate in "${FEEDLINE_PYTHON:-}" /usr/bin/python3 python3; do
    if [ -n "$candidate" ] && "$candidate" -c 'import torch, pandas' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}
if ! python=$(find_python); then
  # scripts/install-deps.sh installs both; this covers a machine where only the build's own packages are there.
  # Idempotent: apt-get skips what is installed.
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo_cmd=(sudo -n); fi
  if command -v apt-get >/dev/null && { [ "$(id -u)" -eq 0 ] || [ ${#sudo_cmd[@]} -gt 0 ]; }; then
    echo "compare-python.sh: installing Debian's python3-torch and python3-pandas"
    apt_install() {
      DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends \
        python3-torch python3-pandas
    }
    apt_install || { "${sudo_cmd[@]}" apt-get update -q && apt_install; } || true
  fi
  if ! python=$(find_python); then
    echo "compare-python.sh: no Python with torch and pandas, and they could not be installed with apt-get" \
         "(install python3-torch and python3-pandas, or set FEEDLINE_PYTHON to a Python that has them)" >&2
    exit 1
  fi
fi
if [ "$format" = parquet ] && ! "$python" -c 'import pyarrow' 2>/dev/null; then
  echo "compare-python.sh: --format parquet needs pyarrow for pandas, which $python lacks; use --format csv" >&2
  exit 1
fi

if [ -n "${FEEDLINE_BIN:-}" ]; then
  bin=$FEEDLINE_BIN
  [ -x "$bin" ] || { echo "compare-python.sh: FEEDLINE_BIN=$bin is not an executable" >&2; exit 1; }
else
  bin="${FEEDLINE_BUILD_DIR:-$here/build}/feedline"
  [ -x "$bin" ] || scripts/build.sh
fi
[ -f "data/$folder/train.$format" ] && [ -f "data/$folder/test.$format" ] || "$bin" prepare --data-dir data
mkdir -p "$out"
# The feedline package for the Python ladder's feedline rungs: the build's, ahead of an installed one.
pkg="$(dirname "$bin")/python"
if [ -d "$pkg/feedline" ]; then export PYTHONPATH="$pkg${PYTHONPATH:+:$PYTHONPATH}"; fi
echo "Python: $python ($("$python" -c 'import torch; print("PyTorch", torch.__version__)')); feedline: $bin"

# OpenBLAS's threads per call, alike on both sides: feedline sets 1 inside each of LibTorch's threads unless
# OPENBLAS_NUM_THREADS says otherwise (include/feedline/train/blas.h); PyTorch leaves OpenBLAS at one thread per core.
# Exported, the setting holds for both, so the two training ladders share one compute floor.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
echo "OpenBLAS threads per call on both sides: $OPENBLAS_NUM_THREADS (OPENBLAS_NUM_THREADS)"

common=(--data-dir data --dataset "$dataset" --format "$format" --threads "$threads")
# The loader ladders run on the whole train split (as feedline bench's does); training on the subset.
loader_json=()
rm -f "$out/python-loader.json"
if [ "$skip_loader" = 0 ]; then
  echo "== Python experiment: loader alone =="
  "$python" scripts/python/experiment.py "${common[@]}" --ladder "${python_rungs[@]}" --loader-only \
    --loader-epochs "$loader_epochs" --json "$out/python-loader.json"
  loader_json=(--python-loader "$out/python-loader.json")
  echo
fi
echo "== Python experiment: training =="
"$python" scripts/python/experiment.py "${common[@]}" --train-limit "$train_limit" --test-limit "$test_limit" \
  --ladder "${python_rungs[@]}" --epochs "$epochs" --json "$out/python-training.json"
echo
echo "== feedline bench =="
skip=(--skip-storage --skip-sweeps --skip-plots)
[ "$skip_loader" = 0 ] || skip+=(--skip-loader)
"$bin" bench --data-dir data --datasets "$dataset" --train-datasets "$dataset" --epochs "$epochs" \
  --train-limit "$train_limit" --test-limit "$test_limit" --loader-epochs "$loader_epochs" "${skip[@]}" \
  --threads "$threads" --out "$out/feedline"
echo
"$python" scripts/python/compare.py "${loader_json[@]}" --python-training "$out/python-training.json" \
  --feedline "$out/feedline/results.json" --markdown "$out/compare.md"
echo "Side-by-side tables written to $out/compare.md"
