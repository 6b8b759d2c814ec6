#!/usr/bin/env bash
# Checks feedline against LibTorch 2.x without a GPU machine: builds it in a Debian trixie chroot against trixie's
# libtorch-dev (2.6, CPU, GCC 14) and runs the LibTorch tests there; then compiles src/train/cuda/cuda_support.cpp,
# the one file only a build against a LibTorch with CUDA compiles, against trixie's libtorch-cuda-dev headers and
# this machine's CUDA headers (/usr/local/cuda/include, when present).
#   scripts/check-libtorch2.sh [--cxx 20]     (--cxx 20: as C++20, which LibTorch 2.12 and later require)
# Needs root, debootstrap (installed when missing) and Debian's mirror, taken from this machine's apt sources.
# The chroot is made once in FEEDLINE_CHROOT (default /var/tmp/feedline-trixie) and reused; the build goes to
# build-libtorch2[-cxx20]/ in this checkout. Not part of scripts/test.sh: it takes 5-10 minutes here.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=lib/packages.sh
. "$here/scripts/lib/packages.sh"
chroot_dir=${FEEDLINE_CHROOT:-/var/tmp/feedline-trixie}
cxx=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cxx)
      [ $# -ge 2 ] || { echo "check-libtorch2.sh: --cxx needs a value (17 or 20)" >&2; exit 2; }
      cxx=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-libtorch2.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "check-libtorch2.sh: needs root (debootstrap, chroot, mount)" >&2; exit 1; }

mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $0 ~ /debian/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || { echo "check-libtorch2.sh: no Debian mirror in this machine's apt sources" >&2; exit 1; }

if [ ! -x "$chroot_dir/usr/bin/cmake" ] || [ ! -f "$chroot_dir/usr/include/torch/csrc/api/include/torch/torch.h" ]; then
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
  echo "check-libtorch2.sh: making a trixie chroot in $chroot_dir"
  [ -x "$chroot_dir/usr/bin/apt-get" ] ||
    debootstrap --variant=minbase --components=main,contrib trixie "$chroot_dir" "$mirror"
  cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
  chroot "$chroot_dir" env DEBIAN_FRONTEND=noninteractive bash -c "apt-get update -q && apt-get install -y -q \
    --no-install-recommends build-essential cmake ninja-build pkg-config libtorch-dev libopenblas0-pthread \
    ${feedline_library_packages[*]} ${feedline_remote_packages[*]}"
fi

# The checkout at the same path inside, so the tests find their data (tests/data) as they do here.
mounts=()
bind() {  # bind SOURCE [ro]
  local target=$chroot_dir$1
  mkdir -p "$target"
  mountpoint -q "$target" && return 0
  mount --bind "$1" "$target"
  mounts=("$target" "${mounts[@]+"${mounts[@]}"}")  # before the remount, so a failed one is still unmounted
  if [ "${2:-}" = ro ]; then mount -o remount,bind,ro "$target"; fi
}
cleanup() { for m in "${mounts[@]+"${mounts[@]}"}"; do umount "$m" || true; done; }
trap cleanup EXIT
bind "$here"
[ -d /usr/share/datasets ] && bind /usr/share/datasets ro
[ -d /usr/local/cuda/include ] && bind "$(readlink -f /usr/local/cuda/include)" ro
mountpoint -q "$chroot_dir/proc" || { mount -t proc proc "$chroot_dir/proc"; mounts=("$chroot_dir/proc" "${mounts[@]}"); }

build=build-libtorch2${cxx:+-cxx$cxx}
echo "check-libtorch2.sh: building $build against $(chroot "$chroot_dir" dpkg-query -W -f='libtorch-dev ${Version}' libtorch-dev)"
chroot "$chroot_dir" bash -c "cd '$here' && cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DFEEDLINE_BUILD_BENCHMARKS=OFF ${cxx:+-DFEEDLINE_CXX_STANDARD=$cxx} >/dev/null &&
  cmake --build $build -j $(nproc) &&
  $build/tests/feedline_tests --gtest_brief=1 --gtest_filter='-PngImages.AHuggingFace*:Memory.*:Blas.*:Cli.DocsHold*' &&
  $build/tests/feedline_tests --gtest_brief=1 --gtest_filter='Memory.*' &&
  $build/tests/feedline_tests --gtest_brief=1 --gtest_filter='Blas.*'"
# (PngImages.AHuggingFace* needs DuckDB through node, which the chroot has not. Memory.* and Blas.* change
# process-wide settings, so each runs in a process of its own, as under CTest. Cli.DocsHold* compares the help
# with docs/cli.md, written by bookworm's CLI11, whose help text trixie's CLI11 lays out otherwise.)

cuda_include=$(readlink -f /usr/local/cuda/include 2>/dev/null || true)
if [ -n "$cuda_include" ] && [ -f "$cuda_include/cuda_runtime_api.h" ]; then
  echo "check-libtorch2.sh: compiling src/train/cuda/cuda_support.cpp against libtorch-cuda-dev's headers"
  chroot "$chroot_dir" bash -c "set -e; d=\$(mktemp -d); trap 'rm -rf \$d' EXIT; cd \$d; apt-get download -q libtorch-cuda-dev 2>/dev/null ||
    { apt-get update -q && apt-get download -q libtorch-cuda-dev; }; dpkg -x libtorch-cuda-dev_*.deb root
    g++ -std=c++${cxx:-17} -fsyntax-only -D_GLIBCXX_USE_CXX11_ABI=1 -I'$here/include' -I'$here/src' \
      -I\$d/root/usr/include -I\$d/root/usr/include/torch/csrc/api/include -I'$cuda_include' \
      '$here/src/train/cuda/cuda_support.cpp'
    echo 'check-libtorch2.sh: cuda_support.cpp compiles'"
else
  echo "check-libtorch2.sh: no CUDA headers in /usr/local/cuda/include: cuda_support.cpp not compiled"
fi
echo "check-libtorch2.sh: passed"
