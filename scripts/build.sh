#!/usr/bin/env bash
# Configures and builds feedline (Release) into build/ with every core. Extra arguments go to cmake's configure.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="${FEEDLINE_BUILD_DIR:-$here/build}"
generator=()
if command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ]; then generator=(-G Ninja); fi
cmake -S "$here" -B "$build" "${generator[@]+"${generator[@]}"}" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" -j "$(nproc)"
