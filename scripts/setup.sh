#!/usr/bin/env bash
# Installs every Debian package amarena needs, then configures and builds it.
#   scripts/setup.sh            # install deps + Release build in ./build
#   SKIP_APT=1 scripts/setup.sh # build only (packages already installed)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  libxbyak-dev          # x86 assembler used by the JIT
  libabsl-dev           # Status/StatusOr, hashing, flat maps, strings
  libgtest-dev libgmock-dev googletest  # unit tests
  libbenchmark-dev      # Google Benchmark suites in bench/
  libcli11-dev          # command-line parsing for tools/amarena
  libzydis-dev          # disassembler for `amarena explain --asm`
  libpthreadpool-dev    # thread pool that runs parallel loops
  libsqlite3-dev        # the on-disk search database (runtime/search_db.cc)
  valgrind              # tests: generated code stays inside its operands
  # Peers for bench/peer_benchmark and `amarena bench --vs` only (never linked
  # into the library; the CLI dlopens them):
  libopenblas-dev libopenblas0-pthread  # OpenBLAS sgemm (pthread build)
  libblis-dev libblis4-pthread          # BLIS sgemm (pthread build)
  libdnnl-dev           # oneDNN: dnnl_sgemm, the matmul primitive, bf16 matmul
  libxsmm-dev           # libxsmm JIT small-matrix sgemm
  libeigen3-dev         # Eigen matrix products (header-only)
  libxnnpack-dev        # XNNPACK fully-connected operator
  python3-matplotlib    # scripts/bench.sh: PNG plots of the results
)

if [ "${SKIP_APT:-0}" != 1 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi

build_type="${BUILD_TYPE:-Release}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
cmake --build build -j"$(nproc)"
