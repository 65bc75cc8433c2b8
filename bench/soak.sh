#!/usr/bin/env bash
# bench/soak.sh [SECONDS] [EVERY] - a mixed soak of `fusebox serve --control`
# (issue 29): for SECONDS (default 600) a seeded driver (bench/soak_driver.py)
# sends, round-robin over 8 sessions, normal requests, aborted uploads
# (headers and part of the body, then close), streams cut after their first
# bytes, and control churn (PUT of a new scenario, reset, report, requests,
# health); every EVERY seconds (default 30) it samples the server's resident
# size (VmRSS) and open fds (/proc/PID/fd). Prints one line per sample and
# "soak: RSS A -> B KB, fds C -> D" at the end (start: first sample after a
# warm-up of one round). SOAK_PACE (default 0.001 s) between actions. Exit 1 if the driver saw an unanswered request.
# Goal: flat. Loopback only.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
bench_build
command -v python3 >/dev/null || die "needs python3"
secs=${1:-600} every=${2:-30}
cat > "$WORK/s.lua" <<'LUA'
return scenario { name = "soak", provider = function(req)
  if req.stream then return stream { content = "a streamed answer of several words", interval = 0.002 } end
  return chat { content = "hi" }
end, expect = { attempts = { max = 3 } } }
LUA
start_server "$WORK/s.lua" "$WORK/t.jsonl" --control
python3 "$BENCH_DIR/soak_driver.py" "$SRV_PORT" "$SRV_PID" "$secs" "$every" "$WORK/s.lua"
