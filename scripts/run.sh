#!/usr/bin/env bash
# The main job: installs what is missing, builds, writes MNIST and FashionMNIST as CSV and Parquet (printing
# the storage table), then trains SimpleCNN on FashionMNIST for 5 epochs with the pre-decoded dataset.
# Extra arguments go to `feedline train` (e.g. --epochs 1, --dataset mnist, --dataset-mode row).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/install-deps.sh
scripts/build.sh
bin="${FEEDLINE_BUILD_DIR:-$here/build}/feedline"
"$bin" prepare --data-dir data
"$bin" train --data-dir data --dataset fashion-mnist --epochs 5 "$@"
