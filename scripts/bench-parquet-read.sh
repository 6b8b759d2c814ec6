#!/usr/bin/env bash
# Our Parquet reader against DuckDB on the same files, with the same thread count, in one run.
# usage: scripts/bench-parquet-read.sh [THREADS] [REPEAT] [FILE... | duckdb-folder]
#   (default: every core, 5, data/*/*.parquet). `duckdb-folder`: the larger files of ../shared/duckdb-parquet-testing
#   that both readers read (those over 100 KB, from pyarrow, Spark, parquet-mr, Hive and DuckDB, beside the small
#   Spark and Hive ones the benchmark goals name).
# feedline is timed twice: as the process's allocator leaves it, and with freed memory kept for the next read
# (--keep-memory), which is how DuckDB's own allocator serves its repeated reads. Both readers are timed a third way:
# a process's first read of the file, in FIRST_READS processes each (default 7, 0 skips it), after one read of a
# small file has started each reader's threads; then both take their memory fresh from the kernel.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
threads=${1:-$(nproc)}
repeat=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
files=("$@")
if [ ${#files[@]} -eq 0 ]; then files=(data/*/*.parquet); fi
if [ "${files[*]}" = duckdb-folder ]; then
  folder="$here/../shared/duckdb-parquet-testing"
  files=()
  for name in lineitem-top10000.gzip userdata1 spark-ontime aws1.snappy candidate bug687_nulls issue_6013 \
              dictionary_multipage uuid_v2 sorted.zstd_18_131072_small malloy-smaller/tbl_; do
    files+=("$folder/$name.parquet")
  done
fi
bin="${FEEDLINE_BUILD_DIR:-$here/build}/bench/feedline_parquet_read"
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
ours=$("$bin" --threads "$threads" --repeat "$repeat" "${files[@]}")
kept=$("$bin" --threads "$threads" --repeat "$repeat" --keep-memory "${files[@]}")
duck=$(node bench/duckdb_read.mjs "$threads" "$repeat" "${files[@]}")
first_reads=${FIRST_READS:-7}
warm="$here/../shared/parquet-testing/data/alltypes_plain.parquet"
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
echo "(kept: malloc keeps freed memory for the next read, as DuckDB's allocator does; see bench/parquet_read.cpp;"
echo " first: each reader's first read of the file in a process, median of $first_reads processes)"
printf '%-52s %8s %12s %10s %10s %12s %6s %9s %9s %6s\n' file rows "feedline ms" "kept ms" "DuckDB ms" "DuckDB/ours" \
  "kept" "first ms" "DuckDB" "first"
join -t, <(echo "$ours" | tail -n +2 | cut -d, -f1,3,5 | sort) <(echo "$kept" | tail -n +2 | cut -d, -f1,5 | sort) |
  join -t, - <(echo "$duck" | tail -n +2 | cut -d, -f1,5 | sort) |
  join -t, -a 1 - <(printf '%s' "$firsts" | sort) |
  awk -F, '{ n = split($1, parts, "/"); name = (n > 1 ? parts[n - 1] "/" : "") parts[n]
             printf "%-52s %8d %12.2f %10.2f %10.2f %11.1fx %5.1fx", name, $2, 1000 * $3, 1000 * $4, 1000 * $5,
             ($3 > 0 ? $5 / $3 : 0), ($4 > 0 ? $5 / $4 : 0)
             if (NF >= 7) printf " %9.2f %9.2f %5.1fx", 1000 * $6, 1000 * $7, ($6 > 0 ? $7 / $6 : 0)
             printf "\n" }'
