#!/usr/bin/env bash
# bench/cpu_ab.sh - CPU per answered request of two fusebox builds, each
# against the bare libmicrohttpd responder (bench/bare_mhd.c) in the same
# round (issue 30): the figure a code change moves and a shared machine's
# noise moves least. Each round runs bare, A, B, B, A, bare (wrk -t1 -c50,
# the Lua provider function of throughput.sh, no --trace; TRACE=1: with
# --trace FILE) and prints A and B's mean CPU per request over the bare
# runs' mean, and B over A.
#
#   bash bench/cpu_ab.sh OLD_FUSEBOX NEW_FUSEBOX   # ROUNDS=4 DURATION=3 TRACE=0
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: bench/cpu_ab.sh FUSEBOX_A FUSEBOX_B"
A=$1 B=$2
for b in "$A" "$B"; do [ -x "$b" ] || die "not an executable: $b"; done
ROUNDS=${ROUNDS:-4}
DURATION=${DURATION:-3}
WARMUP=${WARMUP:-1}
THREADS=1 CONNS=${CONNS:-50}
FUSEBOX_BIN=$A
bench_build
need wrk wrk
need curl curl
bench_nofile 4096

BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":16}'
cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
LUA
cat >"$WORK/fn.lua" <<'LUA'
return scenario {
  name = "bench: cpu a/b",
  provider = function(req) return chat { content = "hello" } end,
}
LUA
start_server "$WORK/fn.lua" ""
curl -s -o "$WORK/resp.body" -X POST -H 'Content-Type: application/json' \
  --data "$BODY" "http://127.0.0.1:$SRV_PORT/v1/chat/completions" || die "cannot capture a fusebox answer"
stop_server

# one CASE: "bare" or a fusebox binary; prints CPU us per request.
one() {
  local pid port t0 res n
  if [ "$1" = bare ]; then
    "$BENCH_OUT/bare_mhd" "$WORK/resp.body" application/json req_bench >"$WORK/bare.out" 2>&1 &
    pid=$!; SERVER_PIDS+=("$pid")
    for _ in $(seq 100); do grep -q '^port' "$WORK/bare.out" && break; sleep 0.05; done
    port=$(awk '/^port/ {print $2}' "$WORK/bare.out")
  else
    FUSEBOX_BIN=$1 start_server "$WORK/fn.lua" "$TRACE_FILE"
    pid=$SRV_PID port=$SRV_PORT
  fi
  WRK_LOG=$WORK/wrk.log wrk_stats "http://127.0.0.1:$port/v1/chat/completions" "$WARMUP" >/dev/null
  t0=$(cpu_ticks "$pid")
  res=$(wrk_stats "http://127.0.0.1:$port/v1/chat/completions" "$DURATION")
  n=$(awk '{print $6}' <<<"$res")
  [ -n "${CPU_AB_DEBUG:-}" ] && echo "one $1: $res ticks $(( $(cpu_ticks "$pid") - t0 ))" >&2
  awk -v t="$(( $(cpu_ticks "$pid") - t0 ))" -v n="$n" -v us="$TICK_US" \
    'BEGIN {printf "%.2f\n", (n > 0 ? t * us / n : 0)}'
  if [ "$1" = bare ]; then stop_pid "$pid"; else stop_server; fi
  if [ -n "$TRACE_FILE" ]; then rm -f "$TRACE_FILE"; fi
}

TRACE_FILE="" TRACED="without a trace"
if [ "${TRACE:-0}" = 1 ]; then TRACE_FILE=$WORK/trace.jsonl TRACED="with --trace FILE"; fi
bench_header
echo "# cpu_ab: A = $A, B = $B; wrk -t1 -c$CONNS -d${DURATION}s, warm-up ${WARMUP}s; rounds of bare A B B A bare; fusebox $TRACED"
printf '| round | bare us/rq | A us/rq | B us/rq | A x bare | B x bare | B x A |\n'
printf '|-------|------------|---------|---------|----------|----------|-------|\n'
for r in $(seq "$ROUNDS"); do
  z1=$(one bare); a1=$(one "$A"); b1=$(one "$B"); b2=$(one "$B"); a2=$(one "$A"); z2=$(one bare)
  awk -v r="$r" -v z1="$z1" -v z2="$z2" -v a1="$a1" -v a2="$a2" -v b1="$b1" -v b2="$b2" 'BEGIN {
    z = (z1 + z2) / 2; a = (a1 + a2) / 2; b = (b1 + b2) / 2
    printf "| %5d | %10.2f | %7.2f | %7.2f | %7.2fx | %7.2fx | %5.3f |\n", r, z, a, b, a / z, b / z, b / a }' |
    tee -a "$WORK/rounds"
done
# the medians of the rounds' ratios
awk -F'|' '{ax[NR] = $6 + 0; bx[NR] = $7 + 0; ba[NR] = $8 + 0}
  function med(v, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
  END { printf "| median |            |         |         | %7.2fx | %7.2fx | %5.3f |\n", med(ax, NR), med(bx, NR), med(ba, NR) }' "$WORK/rounds"
