#!/usr/bin/env bash
# bench/delay.sh - how close injected time lands. At 50 and at 1,000
# concurrent keep-alive clients on 127.0.0.1:
#   floor   `chat {}`, no delay; each client waits 100 ms between requests
#           so the request rate matches the delay case (the reference)
#   delay   `delay { 0.1, chat {} }`: latency - 100 ms is the error
#   stream  `stream { 6 chunks, interval = 0.2 }`: time between chunks as
#           received - 200 ms is the error
# Each client's first answer is a warm-up and is not counted. Latency is
# measured by bench/lat_client.c from the request's first byte sent to the
# answer's last byte received (CLOCK_MONOTONIC).
#
#   bash bench/delay.sh                 # 2 runs
#   RUNS=3 CLIENTS="50" bash bench/delay.sh
#
# Also printed per case: the server's MHD thread CPU time and its run-queue
# wait (from /proc/PID/task/TID/schedstat) - a busy machine shows there.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-2}
CLIENTS=${CLIENTS:-"50 1000"}

bench_build
bench_nofile 4096

cat >"$WORK/floor.lua" <<'EOF'
return scenario { name = "bench: floor", provider = { chat {} } }
EOF
cat >"$WORK/delay.lua" <<'EOF'
return scenario { name = "bench: delay 100 ms", provider = { delay { 0.1, chat {} } } }
EOF
cat >"$WORK/stream.lua" <<'EOF'
return scenario {
  name = "bench: stream 200 ms",
  provider = {
    stream { chunks = { "tick0 ", "tick1 ", "tick2 ", "tick3 ", "tick4 ", "tick5 " }, interval = 0.2 },
  },
}
EOF

# Measured requests per client, so each case is about 2,000 samples.
reqs_for() { if [ "$1" -le 50 ]; then echo $((2000 / $1)); else echo $(( (2000 + $1 - 1) / $1 )); fi; }
streams_for() { if [ "$1" -le 50 ]; then echo 4; else echo 1; fi; }

# run_case KIND CLIENTS: sets RESULT to the lat_client line plus the MHD
# thread's sched_cpu_ms and sched_wait_ms (runs in this shell, so the
# EXIT trap can always stop the server).
run_case() {
  local kind=$1 c=$2 sc args line s0 s1
  case $kind in
    floor)  sc=floor.lua;  args="--requests $(reqs_for "$c") --think-ms 100 --spread-ms 100" ;;
    delay)  sc=delay.lua;  args="--requests $(reqs_for "$c") --spread-ms 100" ;;
    stream) sc=stream.lua; args="--requests $(streams_for "$c") --spread-ms 200" ;;
  esac
  start_server "$WORK/$sc" "$WORK/$kind-$c.jsonl"
  s0=$(mhd_sched)
  # shellcheck disable=SC2086
  line=$(timeout 120 "${NICE[@]}" "$BENCH_OUT/lat_client" --port "$SRV_PORT" --clients "$c" --warmup 1 $args) || true
  s1=$(mhd_sched)
  stop_server
  RESULT=$(awk -v a="$s0" -v b="$s1" -v l="$line" 'BEGIN { split(a, x, " "); split(b, y, " ");
    printf "%s sched_cpu_ms=%.0f sched_wait_ms=%.0f\n", l, (y[1]-x[1])/1e6, (y[2]-x[2])/1e6 }')
}

# row LINE LABEL PREFIX COUNT_KEY TARGET_MS FLOOR50 FLOOR99: one table row.
row() { # LINE LABEL PREFIX COUNT_KEY TARGET_MS FLOOR50 FLOOR99
  awk -v run="$run" -v c="$c" -v lab="$2" -v n="$(kv "$1" "$4")" -v p50="$(kv "$1" "$3_p50")" \
      -v p99="$(kv "$1" "$3_p99")" -v mx="$(kv "$1" "$3_max")" -v t="$5" -v f50="$6" -v f99="$7" \
      -v err="$(kv "$1" errors)" -v cpu="$(kv "$1" sched_cpu_ms)" -v w="$(kv "$1" sched_wait_ms)" 'BEGIN {
    e50 = t == "" ? "" : sprintf("%+8.2f", p50 - t); e99 = t == "" ? "" : sprintf("%+8.2f", p99 - t)
    d50 = f50 == "" ? "" : sprintf("%+8.2f", p50 - t - f50); d99 = f99 == "" ? "" : sprintf("%+8.2f", p99 - t - f99)
    printf "| %-3s | %7s | %-16s | %7s | %7.2f | %7.2f | %7.2f | %9s | %9s | %11s | %11s | %6s | %6s/%4s ms |\n",
      run, c, lab, n, p50, p99, mx, e50, e99, d50, d99, err, cpu, w }'
}

bench_header
echo "# delay: client $BENCH_OUT/lat_client, $RUNS runs"
printf '| %-3s | %7s | %-16s | %7s | %7s | %7s | %7s | %9s | %9s | %11s | %11s | %6s | %14s |\n' \
  run clients case samples p50 p99 max "p50 error" "p99 error" "p50 - floor" "p99 - floor" errors "MHD cpu/wait"
printf '|-----|---------|------------------|---------|---------|---------|---------|-----------|-----------|-------------|-------------|--------|----------------|\n'
status=0
for run in $(seq "$RUNS"); do
  for c in $CLIENTS; do
    run_case floor "$c"; floor=$RESULT
    run_case delay "$c"; delay=$RESULT
    run_case stream "$c"; stream=$RESULT
    for l in "$floor" "$delay" "$stream"; do
      echo "$l" >>"${DELAY_LOG:-/dev/null}"
      [ "$(kv "$l" errors)" = 0 ] || status=1
    done
    f50=$(kv "$floor" lat_p50); f99=$(kv "$floor" lat_p99)
    row "$floor" "floor (chat)" lat requests "" "" ""
    row "$delay" "delay 100 ms" lat requests 100 "$f50" "$f99"
    row "$stream" "stream gap 200ms" gap gaps 200 "" ""
  done
done
echo "# ms; error = measured - injected; '- floor' = error minus the floor's latency at the same percentile;"
echo "# stream: gaps between successive chunks of one answer as received; MHD cpu/wait = the server thread's"
echo "# CPU time / time runnable but waiting for a CPU during the case."
exit $status
