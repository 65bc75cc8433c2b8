#!/usr/bin/env bash
# bench/hunt_search.sh - does fusebox hunt's guided search (prefer schedules
# that made the client do something new) beat random search? Runs to the
# first finding (hunt.json's found_at_run: runs played when the schedule
# that was then shrunk was first seen) and runs in all (shrinking and the
# reference checks included), median and range over SEEDS, for each target.
# Targets: the built-in naive and sdk-default clients over the whole space
# (--call any), and tests/data/hunt/ra_after_503.py (a Python client whose
# only bug needs "503 then 429 with Retry-After") over the chat steps, as a
# command under --warp (SLOW=0 skips it). Loopback only, bounded by BUDGET.
#   bash bench/hunt_search.sh            SEEDS="1 2 ... 10" BUDGET=400 SLOW=1 BUILTIN=1
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$FUSEBOX_BIN" ] || FUSEBOX_BIN="$ROOT/build/fusebox"
[ -x "$FUSEBOX_BIN" ] || die "build fusebox first (bash scripts/build.sh)"
SEEDS=${SEEDS:-"1 2 3 4 5 6 7 8 9 10"}
BUDGET=${BUDGET:-400}
SLOW=${SLOW:-1}
BUILTIN=${BUILTIN:-1}

# one TARGET MODE ARGS...: prints "found_at runs" per seed, "- runs" when none
one() {
  local name=$1 mode=$2
  shift 2
  local s flag=()
  [ "$mode" = random ] && flag=(--random)
  for s in $SEEDS; do
    local out="$WORK/$name-$mode-$s"
    "$FUSEBOX_BIN" hunt --seed "$s" --budget "$BUDGET" "${flag[@]}" -q --out "$out" "$@" || true
    python3 - "$out/hunt.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["findings"]
print((f[0]["found_at_run"] if f else "-"), d["runs"])
PY
  done
}

# summary NAME MODE < lines: median and range of the first column
summary() {
  python3 -c '
import sys, statistics
rows = [l.split() for l in sys.stdin if l.strip()]
found = [int(a) for a, _ in rows if a != "-"]
runs = [int(b) for _, b in rows]
miss = sum(1 for a, _ in rows if a == "-")
med = statistics.median(found) if found else float("nan")
print("| %s | %s | %s | %s–%s | %d of %d | %s |" % (sys.argv[1], sys.argv[2], med,
      min(found) if found else "-", max(found) if found else "-", len(found), len(rows),
      statistics.median(runs)))
' "$1" "$2"
}

echo "| target | search | runs to first finding (median) | range | seeds with a finding | runs in all (median) |"
echo "|---|---|---|---|---|---|"
for c in naive sdk-default; do
  [ "$BUILTIN" = 1 ] || break
  for m in guided random; do
    one "$c" "$m" --client "$c" --call any | summary "$c, --call any" "$m"
  done
done
if [ "$SLOW" = 1 ]; then
  for m in guided random; do
    one two-step "$m" --call chat --max-retry-after 5 --warp 10 -j 2 \
      -- python3 "$ROOT/tests/data/hunt/ra_after_503.py" | summary "ra_after_503.py, chat" "$m"
  done
fi
