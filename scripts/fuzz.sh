#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, with ASan and UBSan) into build-fuzz/ and runs each for a bounded time,
# seeded with the Parquet test corpus, DuckDB's test folder and tests/fuzz/seeds. A crash, leak or sanitizer report stops it with a
# non-zero exit, leaving the input in build-fuzz/findings/<target>/; put it in tests/fuzz/regressions/ with its
# expected message once fixed.
#   scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]   (targets: parquet csv idx image)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
seconds=${1:-60}
shift $(( $# > 0 ? 1 : 0 ))
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(parquet csv idx image); fi
cxx=$(command -v clang++ || command -v clang++-14 || true)
cc=$(command -v clang || command -v clang-14 || true)
if [ -z "$cxx" ]; then echo "fuzz.sh: clang++ not found (scripts/install-deps.sh installs it)" >&2; exit 1; fi
build="${FEEDLINE_FUZZ_BUILD_DIR:-$here/build-fuzz}"
generator=()
if command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ]; then generator=(-G Ninja); fi
cmake -S "$here" -B "$build" "${generator[@]+"${generator[@]}"}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" -DFEEDLINE_FUZZ=ON -DFEEDLINE_BUILD_TESTS=OFF \
  -DFEEDLINE_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

for target in "${targets[@]}"; do
  corpus="$build/corpus/$target" findings="$build/findings/$target"
  rm -rf "$findings"
  mkdir -p "$corpus" "$findings"
  seeds=()
  [ -d "$here/tests/fuzz/seeds/$target" ] && seeds+=("$here/tests/fuzz/seeds/$target")
  if [ "$target" = parquet ]; then
    # The corpus' files and those of DuckDB's test folder under 256 KiB (bigger ones make every run slow), good
    # and bad, named by their path below tests/data (folders hold files of the same name).
    mkdir -p "$build/seeds/parquet"
    (cd "$here/tests/data" && find parquet-testing/data parquet-testing/bad_data duckdb-parquet-testing \
       -iname '*.parquet' -size -256k -type f 2>/dev/null) | while IFS= read -r f; do
      cp -f "$here/tests/data/$f" "$build/seeds/parquet/${f//\//_}"
    done
    # Files of other producers, when node and their packages are installed: 200 rows under each writer setup of
    # tests/io/arrow_rs_parquet.mjs (most Arrow types), hyparquet_parquet.mjs and parquetjs_parquet.mjs.
    for producer in arrow_rs hyparquet parquetjs; do
      if command -v node >/dev/null && node "$here/tests/io/${producer}_parquet.mjs" \
           "${FEEDLINE_CACHE:-$here/.cache}/npm" "$build/seeds/$producer" 200 >/dev/null 2>&1; then
        for f in "$build/seeds/$producer"/*.parquet; do
          mv -f "$f" "$build/seeds/parquet/${producer}_$(basename "$f")"
        done
      fi
    done
    # A seed the target takes over 2 s on (thousands of rows written back in row groups of 5) would make every
    # run slow, and one over -timeout fails the run: left out here (FuzzReplay reads them all in the io tests).
    for seed in "$build/seeds/parquet"/*; do
      status=0
      # (killed a second after the TERM: libFuzzer's TERM handler can block in the sanitizer's allocator)
      timeout -k 1 2 "$build/fuzz/fuzz_$target" -runs=1 "$seed" >/dev/null 2>&1 || status=$?
      if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "fuzz.sh: seed $(basename "$seed") takes over 2 s, left out"
        rm -f "$seed"
      fi
    done
    seeds+=("$build/seeds/parquet")
  fi
  if [ -d "$here/tests/fuzz/regressions/$target" ]; then seeds+=("$here/tests/fuzz/regressions/$target"); fi
  echo "fuzz.sh: fuzz_$target for ${seconds}s"
  log="$build/fuzz_$target.log"
  status=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" "$corpus" "${seeds[@]+"${seeds[@]}"}" >"$log" 2>&1 || status=$?
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added|SUMMARY)" "$log" || true
  if [ "$status" -ne 0 ] || [ -n "$(ls -A "$findings")" ]; then
    tail -n 60 "$log" >&2
    echo "fuzz.sh: fuzz_$target found a problem (exit $status); inputs in $findings, log in $log" >&2
    exit 1
  fi
done
echo "fuzz.sh: no findings"
