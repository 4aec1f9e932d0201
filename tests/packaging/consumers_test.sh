#!/usr/bin/env bash
# amarena as a library, the way other projects consume it:
#  (a) `cmake --install` of BUILD_DIR into a temporary prefix, then a C project
#      using find_package(amarena CONFIG) and a C++17 program built with
#      `pkg-config --static amarena` (and amarena/amarena.hpp);
#  (b) a project that add_subdirectory()s the source tree with the tests,
#      benchmarks, tools and examples off and GoogleTest, Google Benchmark,
#      CLI11 and Zydis made unfindable: the library needs none of them. It
#      builds amarena with BUILD_SHARED_LIBS=ON, so that one build of the
#      library serves (c) too;
#  (c) that shared library, installed, linked into a consumer's shared
#      library that a program dlopens; libamarena.so's dynamic symbols must be
#      amarena_* alone.
# Each consumer checks "matmul 13x7x100 f32" against a naive loop.
#
#   consumers_test.sh SOURCE_DIR BUILD_DIR [SANITIZE]
#
# SANITIZE ON (a build with AMARENA_SANITIZE) compiles and links everything
# here with ASan+UBSan too. A compiler launcher (ccache) is taken from the
# environment's CMAKE_C_COMPILER_LAUNCHER / CMAKE_CXX_COMPILER_LAUNCHER.
set -euo pipefail

src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
sanitize=${3:-OFF}
here="$src/tests/packaging"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

gen=()
if command -v ninja >/dev/null; then gen=(-G Ninja); fi
if [ "$sanitize" = ON ]; then
  san="-fsanitize=address,undefined -fno-sanitize-recover=all"
  export CFLAGS="$san" CXXFLAGS="$san" LDFLAGS="$san"
fi
# The library's own configuration, as in its top-level build, except that the
# build of the library here, (b) and (c), compiles without optimization:
# they check how amarena is configured, found, linked and exported, not how
# fast it runs, and -O0 compiles in about two thirds of the time. (The
# installed static library of (a) is the Release build's own.)
common=("${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-DNDEBUG
        -DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG -DAMARENA_SANITIZE="$sanitize")
quiet() {  # runs "$@", showing its output only if it fails
  local log="$tmp/log"
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "FAILED: $*" >&2
    exit 1
  fi
}
export AMARENA_DB=off

echo "== (a) install, find_package (C) and pkg-config (C++17)"
prefix="$tmp/prefix"
quiet cmake --install "$build" --prefix "$prefix"
quiet cmake -S "$here/c_consumer" -B "$tmp/c_consumer" "${gen[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
quiet cmake --build "$tmp/c_consumer" -j2
"$tmp/c_consumer/c_consumer"

pc_dir=$(dirname "$(find "$prefix" -name amarena.pc | head -1)")
export PKG_CONFIG_PATH="$pc_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkg-config --exists amarena
# shellcheck disable=SC2046  # pkg-config's output is meant to be split
"${CXX:-c++}" -std=c++17 -Wall -Wextra -Werror ${CXXFLAGS:-} \
  -o "$tmp/cpp_consumer" "$here/cpp_consumer.cc" \
  $(pkg-config --cflags --libs --static amarena) ${LDFLAGS:-}
"$tmp/cpp_consumer"

echo "== (b) add_subdirectory with the library alone (shared)"
quiet cmake -S "$here/subdir_consumer" -B "$tmp/subdir" "${common[@]}" \
  -DAMARENA_SOURCE_DIR="$src" -DBUILD_SHARED_LIBS=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_zydis=ON
quiet cmake --build "$tmp/subdir" -j2 --target subdir_consumer
"$tmp/subdir/subdir_consumer"
for t in amarena_cli core_test c_api_example search_benchmark; do
  if grep -q "^build $t\b\|^$t:" "$tmp/subdir/build.ninja" \
      "$tmp/subdir/Makefile" 2>/dev/null; then
    echo "the add_subdirectory build defines $t" >&2
    exit 1
  fi
done

echo "== (c) the shared library of (b), installed, linked into a consumer's .so"
quiet cmake --install "$tmp/subdir" --prefix "$tmp/shared_prefix"
so=$(find "$tmp/shared_prefix" -name 'libamarena.so.*.*.*' | head -1)
[ -n "$so" ] || { echo "no libamarena.so.X.Y.Z installed" >&2; exit 1; }
soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
case "$soname" in
  libamarena.so.[0-9]*) ;;
  *) echo "libamarena's SONAME is '$soname'" >&2; exit 1 ;;
esac
symbols=$(nm -D --defined-only "$so" | awk '{print $NF}')
offenders=$(grep -v '^amarena_' <<<"$symbols" || true)
if [ -n "$offenders" ]; then
  echo "libamarena.so exports more than amarena_*:" >&2
  echo "$offenders" >&2
  exit 1
fi
grep -qx amarena_kernel_get <<<"$symbols" || {
  echo "libamarena.so does not export amarena_kernel_get" >&2; exit 1; }
quiet cmake -S "$here/shared_consumer" -B "$tmp/shared_consumer" "${gen[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/shared_prefix"
quiet cmake --build "$tmp/shared_consumer" -j2
# The plugin's dlclose must not unmap amarena under its threads.
readelf -d "$so" | grep -q "Flags:.*NODELETE" || {
  echo "libamarena.so is not marked NODELETE" >&2; exit 1; }
for _ in 1 2 3 4 5; do
  "$tmp/shared_consumer/host" "$tmp/shared_consumer/plugin.so" >/dev/null
done
echo "shared consumer: ok"
echo "$(wc -l <<<"$symbols") dynamic symbols, all amarena_*; $soname"
echo "all consumers ok"
