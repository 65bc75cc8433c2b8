#!/usr/bin/env bash
# bench/lua_loops.sh - one Lua state per event loop against the single
# locked state of old (issue 13 item 3), on the scenario engine alone: two
# threads ask one scenario for decisions (bench/lua_loops.c says how).
# Goal: with a state per loop no decision waits for another loop's call
# (waits = 0 in both cases); exit 1 when one did.
#
#   bash bench/lua_loops.sh            # N=20000 decisions per thread
set -euo pipefail
source "$(dirname "$0")/lib.sh"

N=${N:-20000}
SIM_BUILD=${SIM_BUILD:-$ROOT/build-bench}
need pkg-config pkg-config
cmake -S "$ROOT" -B "$SIM_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
  cmake --build "$SIM_BUILD" --target fusebox_sim -j2 >/dev/null || die "cannot build the sim library"
make -s -C "$BENCH_DIR" OUT="$BENCH_OUT" GUARD_BUILD="$SIM_BUILD" loops >/dev/null ||
  die "cannot build lua_loops"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC') · checkout $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?') · $(nproc) cores · load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# lua_loops: 2 threads, $N fast decisions each; slow: thread A runs 20 calls of 3e6 Lua loop iterations while B decides"
out=$("$BENCH_OUT/lua_loops" --n "$N")
echo "$out"
waits=$(echo "$out" | awk -F'|' '/a state per loop/ {gsub(/ /, "", $6); s += $6} END {print s + 0}')
if [ "$waits" -eq 0 ]; then
  echo "# goal: no wait with a state per loop: met (0 waits)"
else
  echo "# goal: no wait with a state per loop: MISSED ($waits waits)"
  exit 1
fi
