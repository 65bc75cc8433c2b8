#!/usr/bin/env bash
# A short fuzzing pass for CI: installs clang and libFuzzer's runtime when
# missing, replays every regression input, then fuzzes each target briefly.
#   bash scripts/fuzz-ci.sh [SECONDS_PER_TARGET]   (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
missing=""
for p in clang libclang-rt-14-dev; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq $missing >/dev/null
fi
bash fuzz/build.sh
bash fuzz/run.sh "${1:-10}"
