#!/usr/bin/env bash
# The build stage of the Dockerfile, as a script the Dockerfile runs and a
# test runs on this machine (tests/cli/dockerfile.sh), so the two cannot
# drift: configure the build the README uses (RelWithDebInfo), build only
# the program, install it stripped into PREFIX (bin/fusebox, share/fusebox,
# share/doc/fusebox).
# usage: bash scripts/docker-build-stage.sh PREFIX [BUILD_DIR]
set -euo pipefail
prefix=${1:?usage: docker-build-stage.sh PREFIX [BUILD_DIR]}
src=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$src/build-docker}
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$build" --target fusebox -j"$(nproc)"
cmake --install "$build" --prefix "$prefix" --strip > /dev/null
"$prefix/bin/fusebox" --version
