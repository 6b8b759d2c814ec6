#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test through CTest.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh"
"$here/scripts/build.sh"
cd "${FEEDLINE_BUILD_DIR:-$here/build}"
ctest --output-on-failure -j "$(nproc)" --timeout 900
