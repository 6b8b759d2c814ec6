#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test through CTest (the Python package's
# pytest suite too); then builds the torch-free io tests (IDX, CSV, Parquet, hostile and corrupt files) again under
# AddressSanitizer and UndefinedBehaviorSanitizer and runs them; then runs each libFuzzer target for a bounded time
# (FEEDLINE_FUZZ_SECONDS, default 60). FEEDLINE_SKIP_SANITIZE=1 / FEEDLINE_SKIP_FUZZ=1 leave those out.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh"
# The Python package is part of what is tested: a missing piece (pybind11, torch for Python) fails the build here.
# Tests and micro-benchmarks on, whatever an earlier build of the main job left in the cache.
"$here/scripts/build.sh" -DFEEDLINE_BUILD_PYTHON=ON -DFEEDLINE_BUILD_TESTS=ON -DFEEDLINE_BUILD_BENCHMARKS=ON
cd "${FEEDLINE_BUILD_DIR:-$here/build}"
ctest --output-on-failure -j "$(nproc)" --timeout 900

if [ "${FEEDLINE_SKIP_SANITIZE:-0}" != 1 ]; then
  asan="${FEEDLINE_ASAN_BUILD_DIR:-$here/build-asan}"
  generator=()
  if command -v ninja >/dev/null && [ ! -f "$asan/CMakeCache.txt" ]; then generator=(-G Ninja); fi
  cmake -S "$here" -B "$asan" "${generator[@]+"${generator[@]}"}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFEEDLINE_SANITIZE=ON -DFEEDLINE_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build "$asan" --target feedline_io_tests -j "$(nproc)"
  echo "test.sh: io tests under AddressSanitizer + UndefinedBehaviorSanitizer"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$asan/tests/feedline_io_tests" --gtest_brief=1
fi

if [ "${FEEDLINE_SKIP_FUZZ:-0}" != 1 ]; then
  "$here/scripts/fuzz.sh" "${FEEDLINE_FUZZ_SECONDS:-60}"
fi
