#!/usr/bin/env bash
# The main job: installs what is missing, builds, writes MNIST and FashionMNIST as CSV and Parquet (printing
# the storage table), runs the default benchmark lab (`feedline bench`: storage table, loader ladder, training
# ladder and sweeps, results in results/), then trains SimpleCNN on FashionMNIST for 5 epochs with the
# pre-decoded dataset, ending with the experiment's four lines and the test accuracy.
# Extra arguments go to `feedline train` (e.g. --epochs 1, --dataset mnist, --dataset-mode row);
# FEEDLINE_SKIP_BENCH=1 leaves the bench out.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/install-deps.sh
scripts/build.sh
bin="${FEEDLINE_BUILD_DIR:-$here/build}/feedline"
"$bin" prepare --data-dir data
if [ "${FEEDLINE_SKIP_BENCH:-0}" != 1 ]; then
  "$bin" bench --data-dir data --out results
fi
# train's own defaults are the main job (data/, fashion-mnist, 5 epochs), so that the arguments may set any of them.
"$bin" train "$@"
