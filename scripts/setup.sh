#!/usr/bin/env bash
# Set-up on a fresh Debian 12 (as root): install what fusebox needs, build it,
# and run the main job. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS="build-essential cmake pkg-config curl python3 libmicrohttpd-dev libcurl4-openssl-dev libcjson-dev liblua5.4-dev libcunit1-dev"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "== installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing >/dev/null
fi

echo "== building (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

echo "== main job"
exec bash scripts/main-job.sh
