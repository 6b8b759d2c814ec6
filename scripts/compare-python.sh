#!/usr/bin/env bash
# The Python experiment beside feedline, on this machine, in one run: the Python ladder (loader alone, then
# training) and `feedline bench` with the same data, subset and epochs, then both ladders side by side.
#   scripts/compare-python.sh [--dataset fashion-mnist] [--format csv] [--epochs 1] [--train-limit 20000]
#                             [--test-limit 5000] [--out results/compare]
# Needs Python with PyTorch and pandas: Debian's python3-torch and python3-pandas are installed when missing.
# pandas reads Parquet only with pyarrow (not in Debian), so the Python side reads CSV unless told otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

dataset=fashion-mnist format=csv epochs=1 train_limit=20000 test_limit=5000 out=results/compare
while [ $# -gt 0 ]; do
  case "$1" in
    --dataset) dataset=$2; shift 2 ;;
    --format) format=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --train-limit) train_limit=$2; shift 2 ;;
    --test-limit) test_limit=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "compare-python.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

# A Python that can import torch and pandas: FEEDLINE_PYTHON, else Debian's, else whatever python3 is.
python=""
for candidate in "${FEEDLINE_PYTHON:-}" /usr/bin/python3 python3; do
  if [ -n "$candidate" ] && "$candidate" -c 'import torch, pandas' 2>/dev/null; then python=$candidate; break; fi
done
if [ -z "$python" ]; then
  if command -v apt-get >/dev/null; then
    echo "compare-python.sh: installing python3-torch and python3-pandas"
    sudo_cmd=(); if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
      python3-torch python3-pandas >/dev/null
    python=/usr/bin/python3
  fi
  if [ -z "$python" ] || ! "$python" -c 'import torch, pandas' 2>/dev/null; then
    echo "compare-python.sh: no Python with torch and pandas (set FEEDLINE_PYTHON)" >&2
    exit 1
  fi
fi

bin="${FEEDLINE_BIN:-${FEEDLINE_BUILD_DIR:-$here/build}/feedline}"
[ -x "$bin" ] || scripts/build.sh
[ -f "data/$( [ "$dataset" = mnist ] && echo MNIST || echo FashionMNIST)/train.csv" ] || "$bin" prepare --data-dir data
mkdir -p "$out"

common=(--data-dir data --dataset "$dataset" --format "$format")
# The loader ladders run on the whole train split (as feedline bench's does); training on the subset.
echo "== Python experiment: loader alone =="
"$python" scripts/python/experiment.py "${common[@]}" --ladder --loader-only --loader-epochs 2 \
  --json "$out/python-loader.json"
echo "== Python experiment: training =="
"$python" scripts/python/experiment.py "${common[@]}" --train-limit "$train_limit" --test-limit "$test_limit" \
  --ladder --epochs "$epochs" --json "$out/python-training.json"
echo "== feedline bench =="
"$bin" bench --data-dir data --datasets "$dataset" --train-datasets "$dataset" --epochs "$epochs" \
  --train-limit "$train_limit" --test-limit "$test_limit" --loader-epochs 2 --skip-storage --skip-sweeps \
  --out "$out/feedline"
echo
"$python" scripts/python/compare.py --python-loader "$out/python-loader.json" \
  --python-training "$out/python-training.json" --feedline "$out/feedline/results.json" --markdown "$out/compare.md"
echo "Side-by-side tables written to $out/compare.md"
