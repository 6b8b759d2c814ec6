#!/usr/bin/env bash
# What feedline's two process settings buy a CPU training epoch, side by side in one run: glibc's malloc keeping
# freed memory (FEEDLINE_MALLOC) and OpenBLAS on one thread per call (OPENBLAS_NUM_THREADS), each on and off.
# Every round runs the four settings once, in a rotated order; the table gives each setting's median train time
# per epoch and page faults, against feedline's defaults.
#   scripts/bench-cpu-settings.sh [ROUNDS] [SAMPLES]   (default: 5 rounds, the first 20000 FashionMNIST samples)
# One-epoch runs of `feedline train --dataset-mode device` (no loader cost) on the data `feedline prepare` wrote.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
rounds=${1:-5}
samples=${2:-20000}
case "$rounds$samples" in *[!0-9]*|'') echo "bench-cpu-settings.sh: ROUNDS and SAMPLES must be numbers" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] || { echo "bench-cpu-settings.sh: ROUNDS must be at least 1" >&2; exit 2; }
bin="${FEEDLINE_BUILD_DIR:-$here/build}/feedline"
[ -x "$bin" ] || { echo "bench-cpu-settings.sh: build first: scripts/build.sh" >&2; exit 1; }
[ -f data/FashionMNIST/train.parquet ] || { echo "bench-cpu-settings.sh: no data: $bin prepare" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-cpu-settings.sh: needs GNU time (Debian's package time)" >&2; exit 1; }
cores=$(nproc)

names=("feedline's defaults" "FEEDLINE_MALLOC=system" "OPENBLAS_NUM_THREADS=$cores" "both off")
envs=("" "FEEDLINE_MALLOC=system" "OPENBLAS_NUM_THREADS=$cores" "FEEDLINE_MALLOC=system OPENBLAS_NUM_THREADS=$cores")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "CPU settings: FashionMNIST, first $samples samples, 1 epoch, batch 512, device dataset, $cores threads," \
     "$rounds rounds ($(date -u +%F), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'))"
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < 4; k++)); do
    i=$(( (k + r) % 4 ))
    # shellcheck disable=SC2086  # envs[i] is a list of NAME=value words
    env ${envs[$i]} /usr/bin/time -f 'faults %R' "$bin" train --dataset-mode device --device cpu --epochs 1 \
      --limit "$samples" --data-dir data >"$tmp/out" 2>&1 || { cat "$tmp/out" >&2; exit 1; }
    train=$(grep -o 'train [0-9.]*s' "$tmp/out" | head -1 | tr -dc '0-9.' || true)
    faults=$(grep -o 'faults [0-9]*' "$tmp/out" | tail -1 | tr -dc '0-9' || true)
    if [ -z "$train" ] || [ -z "$faults" ]; then
      echo "bench-cpu-settings.sh: no train time or page faults in the output of ${names[$i]}:" >&2
      cat "$tmp/out" >&2
      exit 1
    fi
    echo "$train $faults" >>"$tmp/$i"
    if [ -t 2 ]; then printf '\rround %d/%d' $((r + 1)) "$rounds" >&2; fi
  done
done
if [ -t 2 ]; then printf '\r' >&2; fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
base=$(cut -d' ' -f1 "$tmp/0" | median)
printf '%-34s %14s %12s %14s\n' setting "train s/epoch" "vs defaults" "page faults"
for i in 0 1 2 3; do
  t=$(cut -d' ' -f1 "$tmp/$i" | median)
  f=$(cut -d' ' -f2 "$tmp/$i" | median)
  printf '%-34s %14.2f %11.2fx %14.0f\n' "${names[$i]}" "$t" "$(echo "$t $base" | awk '{ print $1 / $2 }')" "$f"
done
