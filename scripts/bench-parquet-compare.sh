#!/usr/bin/env bash
# Two builds of feedline's Parquet reader side by side in one run: this checkout's build against another's (an
# earlier commit built into its own folder), on the same files and threads, to tell whether a change made reads
# slower. usage: scripts/bench-parquet-compare.sh OTHER_BUILD_DIR [THREADS] [REPEAT] [FILE... | duckdb-folder |
# large-files]   (defaults: every core, 5, duckdb-folder; the file sets as scripts/bench-parquet-read.sh names them).
# Each round runs both readers on every file, this build first in odd rounds and the other first in even ones (ROUNDS,
# default 3), each reporting its median of REPEAT reads after a warm-up, in new memory and kept memory; the table
# gives each reader's median over the rounds and this build's time over the other's (below 1: this build is faster),
# and the geometric mean of those ratios over the files.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# shellcheck source=lib/parquet-bench-files.sh
. "$here/scripts/lib/parquet-bench-files.sh"
[ $# -ge 1 ] || { sed -n 2,7p "$0" >&2; exit 2; }
other_dir=$1
other_bin="$other_dir/bench/feedline_parquet_read"
shift
threads=${1:-$(nproc)}
repeat=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
files=("$@")
if [ ${#files[@]} -eq 0 ]; then files=(duckdb-folder); fi
if [ "${files[*]}" = duckdb-folder ]; then
  mapfile -t files < <(duckdb_folder_files "$here")
elif [ "${files[*]}" = large-files ]; then
  folder="$here/data/large-parquet/${LARGE_ROWS:-10000000}-rows"
  [ -d "$folder" ] || { echo "no $folder: scripts/bench-parquet-read.sh T R large-files writes it" >&2; exit 1; }
  files=("$folder"/*.parquet)
fi
this_bin="${FEEDLINE_BUILD_DIR:-$here/build}/bench/feedline_parquet_read"
for bin in "$this_bin" "$other_bin"; do
  [ -x "$bin" ] || { echo "$bin: not built (cmake --build DIR --target feedline_parquet_read)" >&2; exit 1; }
done
rounds=${ROUNDS:-3}
results=$(mktemp)
trap 'rm -f "$results"' EXIT
# Lines of: mode,reader,file,median seconds.
run() {  # reader label, binary, mode flag
  "$2" --threads "$threads" --repeat "$repeat" ${3:+"$3"} "${files[@]}" | tail -n +2 |
    awk -F, -v who="$1" -v mode="${3:-new}" '{ print mode "," who "," $1 "," $5 }' >> "$results"
}
for round in $(seq "$rounds"); do
  for mode in "" --keep-memory; do
    if [ $((round % 2)) = 1 ]; then
      run this "$this_bin" "$mode"; run other "$other_bin" "$mode"
    else
      run other "$other_bin" "$mode"; run this "$this_bin" "$mode"
    fi
  done
done
echo "Parquet read to memory, this build against $other_dir, $threads threads, median of $rounds rounds of $repeat reads"
echo "($(date -u +%F), $(nproc) cores; ratio: this build's time over the other's)"
printf '%-60s %9s %9s %6s %9s %9s %6s\n' file "new ms" other ratio "kept ms" other ratio
sort -t, -k3,3 -k1,1 -k2,2 "$results" | awk -F, '
  function median(list,   n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return v[int((n + 1) / 2)]
  }
  { key = $3; times[key, $1, $2] = times[key, $1, $2] " " $4; if (!(key in seen)) { seen[key] = 1; order[++files] = key } }
  END {
    for (f = 1; f <= files; f++) {
      key = order[f]; n = split(key, parts, "/"); name = (n > 1 ? parts[n - 1] "/" : "") parts[n]
      printf "%-60s", name
      split("new --keep-memory", modes, " ")
      for (m = 1; m <= 2; m++) {
        a = median(times[key, modes[m], "this"]); b = median(times[key, modes[m], "other"])
        printf " %9.2f %9.2f %5.2fx", 1000 * a, 1000 * b, (b > 0 ? a / b : 0)
        if (a > 0 && b > 0) { logs[m] += log(a / b); counted[m]++ }
      }
      printf "\n"
    }
    printf "%-60s %9s %9s %5.2fx %9s %9s %5.2fx\n", "geometric mean of the ratios", "", "",
           (counted[1] ? exp(logs[1] / counted[1]) : 0), "", "", (counted[2] ? exp(logs[2] / counted[2]) : 0)
  }'
