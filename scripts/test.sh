#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite (what CI runs).
# Tests labelled `exhaustive` are long sweeps kept out of CI: run them with
#   ctest --test-dir build -L exhaustive
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
ctest --test-dir build -j2 --output-on-failure -LE exhaustive
