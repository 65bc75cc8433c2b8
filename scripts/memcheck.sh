#!/usr/bin/env bash
# The end-to-end tests under valgrind memcheck: zero errors and zero definite
# leaks, or a non-zero exit. Uses the build/ tree of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build --target e2e -j"$(nproc)" >/dev/null
valgrind --error-exitcode=3 --leak-check=full --errors-for-leak-kinds=definite \
  --show-leak-kinds=definite -q build/tests/e2e
