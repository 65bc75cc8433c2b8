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
# Also printed per case: the server's event loop threads' CPU time and run-queue
# wait (from /proc/PID/task/TID/schedstat) - a busy machine shows there.
#
# References in the same run (issue 6), on the same clients:
#   nginx delay    nginx + echo module: `echo_sleep 0.1; echo <body>;`
#   nginx stream   `echo "data: tickN\n"; echo_flush; echo_sleep 0.2;` x 6
#   WireMock delay WireMock standalone (npm package `wiremock`), a stub with
#                  fixedDelayMilliseconds 100 (no stream: WireMock's
#                  chunkedDribbleDelay splits bytes, not SSE events)
# Goals (issue 13): fusebox's p99 error, delay and stream, no worse than
# nginx's at 50 clients (GOAL_SMALL = 1x) and within 2x nginx's at 1,000
# (GOAL_LARGE = 2x; the goal for a count >= 1000), each a ratio to nginx in
# the same run. Exit 1 when one is missed or a client saw errors.
# REFS="nginx wiremock" (default) picks references; without nginx no goal
# can be judged and the script exits 1.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-2}
CLIENTS=${CLIENTS:-"50 1000"}
REFS=${REFS:-"nginx wiremock"}
GOAL_SMALL=${GOAL_SMALL:-1}
GOAL_LARGE=${GOAL_LARGE:-2}

bench_build
bench_nofile 4096
WIREMOCK_JAR=
case " $REFS " in *" wiremock "*) wiremock_jar ;; esac
BODY='{"id":"req_bench","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! This is a simulated reply.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":21,"completion_tokens":8,"total_tokens":29},"system_fingerprint":null}'
NGX_LOC="location = /v1/chat/completions {
      default_type application/json;
      echo_sleep 0.1;
      echo '$BODY';
    }
    location = /stream/v1/chat/completions {
      default_type text/event-stream;"
for i in 0 1 2 3 4 5; do
  NGX_LOC+="
      echo 'data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tick$i \"}}]}\n';
      echo_flush;"
  [ $i -lt 5 ] && NGX_LOC+="
      echo_sleep 0.2;"
done
NGX_LOC+="
      echo 'data: [DONE]\n';
    }"
WM_MAP='{"request":{"method":"POST","url":"/v1/chat/completions"},"response":{"status":200,"fixedDelayMilliseconds":100,"headers":{"Content-Type":"application/json"},"body":"{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello!\"},\"finish_reason\":\"stop\"}]}"}}'

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

# Measured requests per client.
# 2,000 samples at 50 clients; 6,000 at 1,000 (6 each): the p99 of 2,000 is
# the 20th-worst answer, and one scheduler hiccup of the shared VM moved it
# by 2x between runs (issue 13, fifth pass).
reqs_for() { if [ "$1" -le 50 ]; then echo $((2000 / $1)); else echo $(( (6000 + $1 - 1) / $1 )); fi; }
streams_for() { if [ "$1" -le 50 ]; then echo 4; else echo 1; fi; }

# run_case KIND CLIENTS: sets RESULT to the lat_client line plus the loop
# thread's sched_cpu_ms and sched_wait_ms (runs in this shell, so the
# EXIT trap can always stop the server).
run_case() {
  local kind=$1 c=$2 sc args line s0 s1
  local port path=""
  case $kind in
    floor)  sc=floor.lua;  args="--requests $(reqs_for "$c") --think-ms 100 --spread-ms 100" ;;
    delay|ngx_delay|wm_delay)  sc=delay.lua;  args="--requests $(reqs_for "$c") --spread-ms 100" ;;
    stream|ngx_stream) sc=stream.lua; args="--requests $(streams_for "$c") --spread-ms 200" ;;
  esac
  case $kind in
    ngx_*) start_nginx "ngx-$kind-$c-$run" "$NGX_LOC"; port=$NGX_PORT
           [ "$kind" = ngx_stream ] && path="--path /stream/v1/chat/completions" ;;
    wm_*)  start_wiremock "wm-$kind-$c-$run" "$WM_MAP"; port=$WM_PORT
           # the JVM's first requests are slow: a warm-up run, not counted
           "$BENCH_OUT/lat_client" --port "$port" --clients 50 --requests 40 >/dev/null 2>&1 || true ;;
    *)     start_server "$WORK/$sc" "$WORK/$kind-$c.jsonl"; port=$SRV_PORT ;;
  esac
  s0=$(mhd_sched)
  # shellcheck disable=SC2086
  line=$(timeout 120 "${NICE[@]}" "$BENCH_OUT/lat_client" --port "$port" --clients "$c" --warmup 1 $args $path) || true
  s1=$(mhd_sched)
  case $kind in
    ngx_*) stop_pid "$NGX_PID"; s0="0 0"; s1="0 0" ;;
    wm_*)  stop_pid "$WM_PID"; s0="0 0"; s1="0 0" ;;
    *)     stop_server; rm -f "$WORK/$kind-$c.jsonl" ;;
  esac
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
  run clients case samples p50 p99 max "p50 error" "p99 error" "p50 - floor" "p99 - floor" errors "loop cpu/wait"
printf '|-----|---------|------------------|---------|---------|---------|---------|-----------|-----------|-------------|-------------|--------|----------------|\n'
status=0
SUMMARY=()
for run in $(seq "$RUNS"); do
  for c in $CLIENTS; do
    run_case floor "$c"; floor=$RESULT
    run_case delay "$c"; delay=$RESULT
    run_case stream "$c"; stream=$RESULT
    ngx_delay=""; ngx_stream=""; wm_delay=""
    case " $REFS " in *" nginx "*)
      run_case ngx_delay "$c"; ngx_delay=$RESULT
      run_case ngx_stream "$c"; ngx_stream=$RESULT ;;
    esac
    [ -n "$WIREMOCK_JAR" ] && { run_case wm_delay "$c"; wm_delay=$RESULT; }
    for l in "$floor" "$delay" "$stream" "$ngx_delay" "$ngx_stream" "$wm_delay"; do
      [ -n "$l" ] || continue
      echo "$l" >>"${DELAY_LOG:-/dev/null}"
      [ "$(kv "$l" errors)" = 0 ] || status=1
    done
    f50=$(kv "$floor" lat_p50); f99=$(kv "$floor" lat_p99)
    row "$floor" "floor (chat)" lat requests "" "" ""
    row "$delay" "delay 100 ms" lat requests 100 "$f50" "$f99"
    row "$stream" "stream gap 200ms" gap gaps 200 "" ""
    [ -n "$ngx_delay" ] && row "$ngx_delay" "nginx delay 100" lat requests 100 "" ""
    [ -n "$ngx_stream" ] && row "$ngx_stream" "nginx stream 200" gap gaps 200 "" ""
    [ -n "$wm_delay" ] && row "$wm_delay" "WireMock delay 100" lat requests 100 "" ""
    if [ -n "$ngx_delay" ]; then
      for pair in "delay:$delay:$ngx_delay:lat:100" "stream:$stream:$ngx_stream:gap:200"; do
        IFS=: read -r what fb ng pre tgt <<<"$pair"
        if [ "$c" -ge 1000 ]; then g=$GOAL_LARGE; else g=$GOAL_SMALL; fi
        # ratio of p99 errors; an nginx error under 0.5 ms counts as 0.5 ms
        # (so a ratio to a near-zero reference stays meaningful)
        v=$(awk -v a="$(kv "$fb" "${pre}_p99")" -v b="$(kv "$ng" "${pre}_p99")" -v t="$tgt" -v g="$g" 'BEGIN {
          ea = a - t; eb = b - t; ref = eb < 0.5 ? 0.5 : eb; x = ea / ref
          printf "%s %+.2f %+.2f %.2fx <=%gx", (x <= g ? "yes" : "NO"), ea, eb, x, g }')
        read -r ok ea eb x gl <<<"$v"
        SUMMARY+=("| $run | $c | $what | $ea | $eb | $x | $gl | $ok |")
        [ "$ok" = yes ] || status=1
      done
    fi
  done
done
if [ ${#SUMMARY[@]} -gt 0 ]; then
  echo
  echo "| run | clients | case | fusebox p99 error | nginx p99 error | x nginx | goal | met |"
  echo "|-----|---------|------|-------------------|-----------------|---------|------|-----|"
  printf '%s\n' "${SUMMARY[@]}"
else
  echo "# delay: no nginx reference (REFS=\"$REFS\"): no goal judged" >&2
  status=1
fi
echo "# ms; error = measured - injected; '- floor' = error minus the floor's latency at the same percentile;"
echo "# stream: gaps between successive chunks of one answer as received; loop cpu/wait = the server's event loop threads'"
echo "# CPU time / time runnable but waiting for a CPU during the case (fusebox rows only)."
echo "# goals (issue 13): p99 error <= ${GOAL_SMALL}x nginx's below 1,000 clients, <= ${GOAL_LARGE}x at 1,000 and more (wall clock)."
[ "$status" = 0 ] || echo "# delay: a goal was missed (exit 1)" >&2
exit $status
