# Sourced by install-deps.sh, gpu-pack.sh and check-libtorch2.sh: the Debian -dev packages of the libraries
# feedline's CMake build finds beside LibTorch (one list, so that a new dependency reaches every place that
# builds: this machine, a GPU machine without network access (through gpu-pack.sh) and the LibTorch 2.x chroot).
# libgloo-dev: the Gloo headers that c10d's ProcessGroupGloo header includes (the library itself is inside LibTorch).
# shellcheck shell=bash
feedline_library_packages=(
  libcli11-dev libfmt-dev nlohmann-json3-dev libfast-float-dev libarchive-dev
  libsnappy-dev libzstd-dev zlib1g-dev libdeflate-dev liblz4-dev libbrotli-dev libspng-dev
  libturbojpeg0-dev libjpeg62-turbo-dev libwebp-dev libswscale-dev
  libgtest-dev libgmock-dev
  libgloo-dev
)
# Remote files (HTTP, S3's signing, S3's XML listings). A build without them refuses URLs: gpu-pack.sh leaves them
# out, as the GPU machine reads local files only.
feedline_remote_packages=(libcurl4-openssl-dev libpugixml-dev)
