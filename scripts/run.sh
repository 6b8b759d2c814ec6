#!/usr/bin/env bash
# The main job: installs what is missing, builds, installs the Python package for Debian's python3, writes MNIST
# and FashionMNIST as CSV and Parquet (printing the storage table) and the photo set of `prepare --photos`, runs the
# default benchmark lab (`feedline bench`: storage table, loader ladder, training ladder, sweeps and images, results
# in results/), then trains SimpleCNN on FashionMNIST for 5 epochs with the pre-decoded dataset, ending with the
# experiment's four lines and the test accuracy.
# Extra arguments go to `feedline train` (e.g. --epochs 1, --dataset mnist, --dataset-mode row);
# FEEDLINE_SKIP_BENCH=1 leaves the bench out.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/install-deps.sh
# The tool and the Python package alone: the tests and micro-benchmarks are the test command's to build.
scripts/build.sh -DFEEDLINE_BUILD_TESTS=OFF -DFEEDLINE_BUILD_BENCHMARKS=OFF
build="${FEEDLINE_BUILD_DIR:-$here/build}"
bin="$build/feedline"
# The Python package, where Debian's python3 finds it (/usr/local/lib/python3.N/dist-packages; docs/python.md).
if compgen -G "$build/python/feedline/_feedline*.so" >/dev/null; then
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" cmake --install "$build" --component python >/dev/null
  python=$(sed -n 's/^FEEDLINE_PYTHON:[A-Z]*=//p' "$build/CMakeCache.txt")
  (cd / && "$python" -c 'import feedline; print(f"Python package: feedline {feedline.__version__} in {feedline.__path__[0]}")')
else
  echo "run.sh: the Python package was not built (cmake said why); the rest goes on"
fi
"$bin" prepare --data-dir data
# The photo set for the bench's image rung (5000 JPEGs, seconds); without it the rung says so and is skipped.
if [ ! -d data/photos/jpeg/train ]; then
  "$bin" prepare --data-dir data --photos || echo "run.sh: no photo set written; the bench's image rung is skipped"
fi
if [ "${FEEDLINE_SKIP_BENCH:-0}" != 1 ]; then
  "$bin" bench --data-dir data --out results
fi
# train's own defaults are the main job (data/, fashion-mnist, 5 epochs), so that the arguments may set any of them.
"$bin" train "$@"
