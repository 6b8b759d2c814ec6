#!/usr/bin/env bash
# The Parquet decoders of an earlier commit against the working tree's, side by side in one run: builds
# feedline_decode_bench at REV in a temporary worktree, then alternates the two binaries ROUNDS times (rotating
# which goes first) and prints each benchmark's median time per decode on both sides and the ratio.
#   scripts/bench-decode-compare.sh REV [ROUNDS] [FILTER]   (default: 5 rounds, every benchmark)
# Benchmarks that only one side has are listed and left out. The working tree's binary comes from build/
# (scripts/build.sh first).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
usage="usage: scripts/bench-decode-compare.sh REV [ROUNDS] [FILTER]"
rev=${1:?$usage}
rounds=${2:-5}
filter=${3:-.}
case "$rounds" in *[!0-9]*|'') echo "bench-decode-compare.sh: ROUNDS must be a number" >&2; exit 2 ;; esac
[ "$rounds" -ge 1 ] || { echo "bench-decode-compare.sh: ROUNDS must be at least 1" >&2; exit 2; }
git rev-parse --verify --quiet "$rev^{commit}" >/dev/null || { echo "bench-decode-compare.sh: no commit '$rev'" >&2; exit 2; }
new="${FEEDLINE_BUILD_DIR:-$here/build}/bench/feedline_decode_bench"
[ -x "$new" ] || { echo "bench-decode-compare.sh: build first: scripts/build.sh" >&2; exit 1; }

tmp=$(mktemp -d)
cleanup() { git worktree remove --force "$tmp/tree" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT
git worktree add --quiet --detach "$tmp/tree" "$rev"
echo "Building feedline_decode_bench at $(git rev-parse --short "$rev") ..." >&2
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$tmp/tree" -B "$tmp/build" "${generator[@]+"${generator[@]}"}" -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log" >&2; exit 1; }
cmake --build "$tmp/build" --target feedline_decode_bench >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log" >&2; exit 1; }
old="$tmp/build/bench/feedline_decode_bench"

echo "Decoding, $(git rev-parse --short "$rev") against the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' + changes')):" \
     "$rounds rounds, $(date -u +%F), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
for ((r = 0; r < rounds; r++)); do
  sides=(old new)
  if ((r % 2)); then sides=(new old); fi
  for side in "${sides[@]}"; do
    bin=$old
    [ "$side" = new ] && bin=$new
    # CSV: name,iterations,real_time,cpu_time,time_unit,...
    "$bin" --benchmark_filter="$filter" --benchmark_format=csv 2>/dev/null | grep '^"BM_' |
      awk -F, -v side="$side" '{gsub(/"/, "", $1); print side, $1, $4, $5}' >>"$tmp/times"
  done
done
python3 - "$tmp/times" <<'EOF'
import collections, statistics, sys
times = collections.defaultdict(list)
for line in open(sys.argv[1]):
    side, name, cpu, unit = line.split()
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
    times[(name, side)].append(float(cpu) * scale)
names = sorted({name for name, _ in times})
print(f"| benchmark | before (ms) | after (ms) | speed-up |")
print(f"|---|---:|---:|---:|")
for name in names:
    if (name, "old") not in times or (name, "new") not in times:
        print(f"| {name} | only on one side | | |")
        continue
    old, new = statistics.median(times[(name, "old")]), statistics.median(times[(name, "new")])
    print(f"| {name} | {old:.2f} | {new:.2f} | {old / new:.2f}x |")
EOF
