#!/usr/bin/env bash
# Our Parquet reader against DuckDB on the same files, with the same thread count, in one run.
# usage: scripts/bench-parquet-read.sh [THREADS] [REPEAT] [FILE... | duckdb-folder | large-files]
#   (default: every core, 5, data/*/*.parquet). `duckdb-folder`: the larger files of tests/data/duckdb-parquet-testing
#   that both readers read (those over 100 KB, from pyarrow, Spark, parquet-mr, Hive and DuckDB, beside the small
#   Spark and Hive ones the large-file benchmarks name).
#   `large-files`: the large-file set that bench/make_large_parquet.mjs writes into data/large-parquet/ROWS-rows/
#   (written first when missing; LARGE_ROWS rows, default 10 M, ARROW_ROWS for arrow-rs's files, default 2 M): DuckDB's,
#   Polars' and arrow-rs's writers, SNAPPY, ZSTD and uncompressed. Its table adds each file's size and codec floor
#   (feedline_parquet_read --floor, measured in the kept run's process: the file's pages decompressed by the
#   reader's codec functions on as many threads, plus one memcpy of the decoded table's bytes) with feedline's
#   times over it; FLOOR=1 adds them for any files. FIRST_READS defaults to 3 for it. DuckDB's new-memory reads
#   are left out of it (DUCKDB_NEW=0, which any run may set): its results of these files, kept until the garbage
#   collector runs, take more memory than 24 GiB holds.
# feedline's page faults per read (new memory and kept; the median of the reads') follow the times.
# Both readers are timed three ways. New memory: each repeated read takes new memory for its output (feedline as
# glibc's malloc leaves it, which hands large freed blocks back to the kernel; DuckDB's results left to JavaScript's
# garbage collector, which frees them when it sees fit). Kept: each read reuses the memory the last one freed
# (feedline --keep-memory; DuckDB --free-results, the collector run after each read, outside the time). First: a
# process's first read of the file, in FIRST_READS processes each (default 7, 0 skips it), after one read of a small
# file has started each reader's threads; then both take their memory fresh from the kernel.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# shellcheck source=lib/parquet-bench-files.sh
. "$here/scripts/lib/parquet-bench-files.sh"
threads=${1:-$(nproc)}
repeat=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
files=("$@")
if [ ${#files[@]} -eq 0 ]; then files=(data/*/*.parquet); fi
if [ "${files[*]}" = duckdb-folder ]; then
  mapfile -t files < <(duckdb_folder_files "$here")
fi
floor=${FLOOR:-0}
duck_new=${DUCKDB_NEW:-1}
first_reads=${FIRST_READS:-7}
if [ "${files[*]}" = large-files ]; then
  rows=${LARGE_ROWS:-10000000}
  folder="$here/data/large-parquet/$rows-rows"
  node bench/make_large_parquet.mjs "$folder" "$rows" "${ARROW_ROWS:-2000000}" >&2
  files=()
  for producer in duckdb polars arrowrs; do
    for codec in snappy zstd uncompressed; do files+=("$folder/$producer-$codec-"*rg.parquet); done
  done
  floor=1
  first_reads=${FIRST_READS:-3}
  duck_new=${DUCKDB_NEW:-0}
fi
floor_flag=()
[ "$floor" = 1 ] && floor_flag=(--floor)
bin="${FEEDLINE_BUILD_DIR:-$here/build}/bench/feedline_parquet_read"
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
ours=$("$bin" --threads "$threads" --repeat "$repeat" "${files[@]}")
kept=$("$bin" --threads "$threads" --repeat "$repeat" --keep-memory "${floor_flag[@]}" "${files[@]}")
if [ "$duck_new" = 1 ]; then
  duck=$(node bench/duckdb_read.mjs "$threads" "$repeat" "${files[@]}")
else
  duck=$(echo "$ours" | awk -F, '{ print $1 ",,,,0" }')  # not measured: shown as -
fi
duck_kept=$(node --expose-gc bench/duckdb_read.mjs --free-results "$threads" "$repeat" "${files[@]}")
warm="$here/tests/data/parquet-testing/data/alltypes_plain.parquet"
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : 0) }'; }
firsts=""
if [ "$first_reads" -gt 0 ]; then
  for f in "${files[@]}"; do
    ours_first=() duck_first=()
    for _ in $(seq "$first_reads"); do
      ours_first+=("$("$bin" --threads "$threads" --first-read "$warm" "$f" | tail -n 1 | cut -d, -f5)")
      duck_first+=("$(node bench/duckdb_read.mjs --first-read "$warm" "$threads" 1 "$f" | tail -n 1 | cut -d, -f5)")
    done
    firsts+="$f,$(printf '%s\n' "${ours_first[@]}" | median),$(printf '%s\n' "${duck_first[@]}" | median)"$'\n'
  done
fi
echo "Parquet read to memory, $threads threads, median of $repeat after a warm-up ($(date -u +%F), $(nproc) cores)"
echo "(new: each read takes new memory; kept: each read reuses the last one's; first: each reader's first read of"
echo " the file in a process, median of $first_reads processes; DuckDB's time over feedline's after each pair)"
if [ "$floor" = 1 ]; then
  echo "(floor: the codec floor, median of $repeat; feedline's new and kept times over it after it)"
fi
printf '%-52s %7s' file rows
[ "$floor" = 1 ] && printf ' %8s' MB
printf ' %8s %8s %5s %8s %8s %5s' "new ms" DuckDB "" "kept ms" DuckDB ""
[ "$floor" = 1 ] && printf ' %8s %5s %5s' "floor ms" new kept
printf ' %8s %8s' "faults" "(kept)"
printf ' %8s %8s %5s\n' "first ms" DuckDB ""
# file, rows, new, its faults, DuckDB, kept, its faults, DuckDB kept[, floor, file bytes][, first, DuckDB first].
floors=$(echo "$kept" | tail -n +2 | awk -F, -v on="$floor" '{ print $1 (on == 1 ? "," $8 "," $12 : "") }' | sort)
join -t, <(echo "$ours" | tail -n +2 | cut -d, -f1,3,5,7 | sort) <(echo "$duck" | tail -n +2 | cut -d, -f1,5 | sort) |
  join -t, - <(echo "$kept" | tail -n +2 | cut -d, -f1,5,7 | sort) |
  join -t, - <(echo "$duck_kept" | tail -n +2 | cut -d, -f1,5 | sort) |
  join -t, - <(printf '%s\n' "$floors") |
  join -t, -a 1 - <(printf '%s' "$firsts" | sort) |
  awk -F, -v on="$floor" '
           function pair(a, b) {
             if (b == 0) printf " %8.2f %8s %5s", 1000 * a, "-", "-"
             else printf " %8.2f %8.2f %4.1fx", 1000 * a, 1000 * b, (a > 0 ? b / a : 0) }
           { n = split($1, parts, "/"); name = (n > 1 ? parts[n - 1] "/" : "") parts[n]
             printf "%-52s %7d", name, $2
             if (on == 1) printf " %8.1f", $10 / 1e6
             pair($3, $5); pair($6, $8)
             if (on == 1) printf " %8.2f %4.2fx %4.2fx", 1000 * $9, ($9 > 0 ? $3 / $9 : 0), ($9 > 0 ? $6 / $9 : 0)
             printf " %8d %8d", $4, $7
             first = (on == 1 ? 11 : 9)
             if (NF >= first + 1) pair($first, $(first + 1))
             printf "\n" }'
