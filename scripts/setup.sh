#!/usr/bin/env bash
# Set-up on a fresh Debian 12 (as root): install what fusebox needs, build it,
# and run the main job. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build: a compiler, cmake, pkg-config and the libraries (the -dev packages). Tests: curl,
# python3, chromium (the HTML report), and what the example clients need
# (jq, python3-httpx, python3-tenacity; the Node SDKs come from npm below),
# python3-pytest (the pytest plugin's suite, integrations/pytest),
# and faketime/libfaketime (fusebox exec --warp, found at run time).
# libssl-dev: SHA-256 of long keys (sim/keying.c).
# A fleet (serve --state, docs/fleet.md): hiredis to build, redis-server and
# nginx for its test, wrk for bench/fleet.sh. The Python wheel of
# scripts/package.sh (built offline, tried in a venv by smoke-install.sh):
# python3-pip python3-setuptools python3-wheel python3-venv.
# libnghttp2-dev: cleartext HTTP/2 (sim/h2_bridge.c, issue 26).
# zlib1g-dev: CRC-32 of AWS event stream frames (guard/, sim/eventstream.c).
PKGS="build-essential cmake pkg-config curl python3 libmicrohttpd-dev libcurl4-openssl-dev libssl-dev
      libcjson-dev liblua5.4-dev libcunit1-dev valgrind chromium jq python3-httpx python3-tenacity
      python3-pytest faketime libfaketime libhiredis-dev redis-server nginx wrk
      python3-pip python3-setuptools python3-wheel python3-venv
      libnghttp2-dev zlib1g-dev"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "== installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing >/dev/null
fi

echo "== example clients (npm ci, pinned SDK versions)"
sh examples/clients/install.sh

echo "== building (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

echo "== main job"
exec bash scripts/main-job.sh
