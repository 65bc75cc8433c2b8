#!/usr/bin/env bash
# bench/fleet.sh - what sharing state in Redis costs (issue 15): requests/s
# of one `fusebox serve` without --state against one and two servers with
# --state (one Redis), all in the same run, and the cost per request of the
# Redis round trip (one EVALSHA per arrival; two with a rate limit).
#
# Cases, each on fresh servers, in this order every run:
#   one              one server, state in process, wrk straight at it
#   one+redis        one server --state, wrk straight at it
#   one, nginx       one server, state in process, behind nginx
#   two+redis, nginx two servers --state behind nginx (docs/fleet-nginx.conf),
#                    round robin: the load-balanced fleet
#   latency          wrk -t1 -c1 at one / one+redis: the p50 difference is
#                    the Redis round trip a request pays
# The nginx cases compare like with like (the proxy costs both the same).
#
#   bash bench/fleet.sh                   # RUNS=1 CONNS=50 THREADS=2 DURATION=5 WARMUP=1
#   RUNS=2 DURATION=10 bash bench/fleet.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-1}
CONNS=${CONNS:-50}
THREADS=${THREADS:-2}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}

bench_build
need wrk wrk
need redis-server redis-server
need nginx nginx-light
bench_nofile 4096

BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":16}'
cat >"$WORK/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
EOF
cat >"$WORK/fn.lua" <<'EOF'
return scenario {
  name = "bench: fleet",
  doc = [[A provider function, called for every request.]],
  provider = function(req) return chat { content = "hello" } end,
}
EOF

RPORT=$(free_port)
"${NICE[@]}" redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no \
  --daemonize no >"$WORK/redis.log" 2>&1 &
SERVER_PIDS+=($!)
wait_port "$RPORT" 10 || { cat "$WORK/redis.log" >&2; die "redis-server did not start"; }
STATE="redis://127.0.0.1:$RPORT"

# nginx_front A B: nginx from docs/fleet-nginx.conf in front of ports A, B;
# sets NGX_PID and NGX_PORT.
nginx_front() {
  local d="$WORK/nginx.$RANDOM"
  mkdir -p "$d"
  NGX_PORT=$(free_port)
  sed -e "s#@PREFIX@#$d#g" -e "s#@LISTEN@#$NGX_PORT#g" -e "s#@A@#$1#g" -e "s#@B@#$2#g" \
    "$ROOT/docs/fleet-nginx.conf" >"$d/nginx.conf"
  "${NICE[@]}" nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" >"$d/stdout" 2>&1 &
  NGX_PID=$!
  SERVER_PIDS+=("$NGX_PID")
  wait_port "$NGX_PORT" 10 || { cat "$d/error.log" >&2; die "nginx did not start"; }
}

# measure URL: warm-up, then the measured run; sets RES.
measure() {
  wrk_stats "$1" "$WARMUP" >/dev/null
  RES=$(wrk_stats "$1" "$DURATION")
}

# row RUN NAME RES BASE_RPS: one table row, req/s as a ratio to BASE_RPS.
row() {
  local rps p50 p99 bad se n ratio
  read -r rps p50 p99 bad se n <<<"$3"
  ratio=$(awk -v a="$rps" -v b="$4" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  printf "| %-3s | %-18s | %9.0f | %7.2f | %7.2f | %6d | %7d | %5sx |\n" "$1" "$2" "$rps" "$p50" "$p99" "$bad" "$se" "$ratio"
}

# latency RUN URL: wrk -t1 -c1 (one request at a time); sets RES.
latency() {
  local t=$THREADS c=$CONNS
  THREADS=1 CONNS=1
  measure "$1"
  THREADS=$t CONNS=$c
}

P=/v1/chat/completions
bench_header
echo "# fleet: wrk -t$THREADS -c$CONNS -d${DURATION}s --latency (POST, same body), warm-up ${WARMUP}s;" \
     "redis-server $(redis-server --version | awk '{print $3}' | sed 's/v=//') on loopback; $RUNS runs"
echo "| run | case               |     req/s | p50 ms  | p99 ms  | non2xx | sockerr | x one  |"
echo "|-----|--------------------|-----------|---------|---------|--------|---------|--------|"
for run in $(seq "$RUNS"); do
  start_server "$WORK/fn.lua" ""
  measure "http://127.0.0.1:$SRV_PORT$P"
  base=$(awk '{print $1}' <<<"$RES")
  row "$run" "one" "$RES" "$base"
  latency "http://127.0.0.1:$SRV_PORT$P"; LAT1=$RES
  stop_server

  start_server "$WORK/fn.lua" "" --state "$STATE" --session "bench$run" --new-session
  measure "http://127.0.0.1:$SRV_PORT$P"
  row "$run" "one+redis" "$RES" "$base"
  latency "http://127.0.0.1:$SRV_PORT$P"; LAT2=$RES
  stop_server

  start_server "$WORK/fn.lua" ""
  nginx_front "$SRV_PORT" "$SRV_PORT"
  measure "http://127.0.0.1:$NGX_PORT$P"
  nbase=$(awk '{print $1}' <<<"$RES")
  row "$run" "one, nginx" "$RES" "$base"
  stop_pid "$NGX_PID"
  stop_server

  start_server "$WORK/fn.lua" "" --state "$STATE" --session "bench2$run" --new-session
  A_PID=$SRV_PID A=$SRV_PORT
  start_server "$WORK/fn.lua" "" --state "$STATE" --session "bench2$run"
  nginx_front "$A" "$SRV_PORT"
  measure "http://127.0.0.1:$NGX_PORT$P"
  row "$run" "two+redis, nginx" "$RES" "$base"
  awk -v a="$(awk '{print $1}' <<<"$RES")" -v b="$nbase" \
    'BEGIN { printf "|     | two+redis / one, both behind nginx: %.2fx\n", (b > 0 ? a / b : 0) }'
  stop_pid "$NGX_PID"
  stop_server
  SRV_PID=$A_PID
  stop_server

  awk -v run="$run" -v a="$LAT1" -v b="$LAT2" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    printf "| %-3s | latency, 1 conn: one p50 %.3f ms (%.0f req/s), one+redis p50 %.3f ms (%.0f req/s): the Redis round trip adds %.0f us a request\n",
      run, x[2], x[1], y[2], y[1], (y[2] - x[2]) * 1000 }'
done
echo "# x one: req/s against 'one' of the same run."
