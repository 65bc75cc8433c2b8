#!/usr/bin/env bash
# bench/delay_stages.sh - where the time of a delayed request goes (issue 13
# item 5). Builds fusebox with -DFUSEBOX_STAGES=1 into build-stages/ (see
# sim/stages.h), then for each client count runs `delay { 0.1, chat {} }`
# on fusebox and nginx's `echo_sleep 0.1` in the same run with the same
# keep-alive client (bench/lat_client.c), and prints each one's latency
# error and fusebox's per-stage times of every delayed request:
#   arrive->suspend  the decision (request complete -> the player waits)
#   suspend->due     the delay itself (100 ms)
#   due->fire        the timer fires late by this much
#   fire->handler    MHD_resume_connection until the event loop calls the
#                    access handler again ("resume call": that call alone)
#   handler->queued  the answer built and queued
#   queued->done     until MHD has written it (request completed)
#
#   bash bench/delay_stages.sh                   # CLIENTS="200 500 1000" RUNS=1
#   PERF=1 CLIENTS=1000 bash bench/delay_stages.sh   # + perf profile of the server
# Also printed, robust to a loaded machine: the server process's CPU time
# (every thread, from schedstat) and, with perf, its system calls
# (tracepoints) per request.
#   BEFORE_BIN=/path/to/older/fusebox bash bench/delay_stages.sh
#       also runs an older stages build in the same run (an A/B: before,
#       after and nginx each time, in that order)
# Every run is bounded (timeout 120 s per case); 127.0.0.1 only.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-1}
CLIENTS=${CLIENTS:-"200 500 1000"}
SAMPLES=${SAMPLES:-4000}
STAGES_BUILD=${STAGES_BUILD:-$ROOT/build-stages}
FUSEBOX_BIN=$STAGES_BUILD/fusebox
cmake -S "$ROOT" -B "$STAGES_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS=-DFUSEBOX_STAGES=1 >/dev/null &&
  cmake --build "$STAGES_BUILD" --target fusebox -j2 >/dev/null || die "cannot build fusebox with stages"
bench_build
bench_nofile 4096
BODY='{"id":"req_bench","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! This is a simulated reply.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":21,"completion_tokens":8,"total_tokens":29},"system_fingerprint":null}'
NGX_LOC="location = /v1/chat/completions {
      default_type application/json;
      echo_sleep 0.1;
      echo '$BODY';
    }"
cat >"$WORK/delay.lua" <<'EOS'
return scenario { name = "bench: delay 100 ms", provider = { delay { 0.1, chat {} } } }
EOS

lat() { # PORT CLIENTS
  local r=$(( (SAMPLES + $2 - 1) / $2 ))
  timeout 120 "${NICE[@]}" "$BENCH_OUT/lat_client" --port "$1" --clients "$2" --warmup 1 \
    --requests "$r" --spread-ms 100 || true
}
err() { awk -v a="$(kv "$1" lat_p50)" -v b="$(kv "$1" lat_p99)" -v n="$(kv "$1" requests)" \
  -v e="$(kv "$1" errors)" 'BEGIN { printf "samples %s errors %s p50 error %+.2f ms, p99 error %+.2f ms", n, e, a - 100, b - 100 }'; }

# CPU ns of every thread of process $1 (schedstat), summed.
proc_cpu() {
  local t c=0 a
  for t in /proc/"$1"/task/*; do read -r a _ <"$t/schedstat" 2>/dev/null && c=$((c + a)); done
  echo "$c"
}
# CPU ns of process $1 and its children (nginx's master and workers).
tree_cpu() {
  local c=0 p
  for p in "$1" $(pgrep -P "$1" 2>/dev/null); do c=$((c + $(proc_cpu "$p"))); done
  echo "$c"
}
SYSCALLS="epoll_ctl epoll_wait epoll_pwait2 ppoll write read sendmsg recvfrom futex"

bench_header
status=0
for run in $(seq "$RUNS"); do
  for c in $CLIENTS; do
    for bin in ${BEFORE_BIN:+"$BEFORE_BIN"} "$FUSEBOX_BIN"; do
    out="$WORK/stages-$c-$run.txt"; rm -f "$out"
    FUSEBOX_BIN=$bin FUSEBOX_STAGES_OUT=$out start_server "$WORK/delay.lua" ""
    if [ "${PERF:-0}" = 1 ] && command -v perf >/dev/null; then
      perf record -q -F 999 -g -o "$WORK/perf-$c.data" -p "$SRV_PID" -- sleep 6 >/dev/null 2>&1 &
      PERF_PID=$!
    fi
    STAT_PID=
    if command -v perf >/dev/null && [ "${PERF:-0}" != 1 ]; then
      perf stat -x, -o "$WORK/stat-$c.txt" $(printf -- '-e syscalls:sys_enter_%s ' $SYSCALLS) \
        -p "$SRV_PID" >/dev/null 2>&1 &
      STAT_PID=$!
      sleep 0.3
    fi
    s0=$(mhd_sched); p0=$(proc_cpu "$SRV_PID")
    fb=$(lat "$SRV_PORT" "$c")
    s1=$(mhd_sched); p1=$(proc_cpu "$SRV_PID")
    if [ -n "$STAT_PID" ]; then kill -INT "$STAT_PID" 2>/dev/null; wait "$STAT_PID" 2>/dev/null || true; fi
    stop_server
    if [ "$bin" = "$FUSEBOX_BIN" ]; then label=fusebox; else label=before; fi
    echo "## run $run, $c clients, $label ($bin)"
    echo "$label delay: $(err "$fb")  (loop threads cpu/wait $(awk -v a="$s0" -v b="$s1" 'BEGIN { split(a,x," "); split(b,y," "); printf "%.0f/%.0f ms", (y[1]-x[1])/1e6, (y[2]-x[2])/1e6 }'))"
    nreq=$(awk '/^stages requests=/ { sub("requests=", "", $2); print $2 }' "$out" 2>/dev/null)
    nreq=${nreq:-1}
    echo "  process cpu per request: $(awk -v a="$p0" -v b="$p1" -v n="$nreq" 'BEGIN { printf "%.1f us", (b - a) / 1e3 / n }')"
    [ -n "$STAT_PID" ] && awk -F, -v n="$nreq" '$3 ~ /sys_enter_/ { sub("syscalls:sys_enter_", "", $3); if ($1 + 0 > 0) printf "%s %.2f  ", $3, $1 / n }
      END { print "" }' "$WORK/stat-$c.txt" | sed 's/^/  syscalls per request: /'
    [ -f "$out" ] && sed 's/^/  /' "$out"
    [ "$(kv "$fb" errors)" = 0 ] || status=1
    if [ -n "${PERF_PID:-}" ]; then
      wait "$PERF_PID" 2>/dev/null || true
      [ -n "${PERF_KEEP:-}" ] && cp "$WORK/perf-$c.data" "$PERF_KEEP-$label-$c.data"
      perf report -i "$WORK/perf-$c.data" --no-children --sort symbol -g none --percent-limit 1.5 2>/dev/null |
        grep -v '^#' | grep -v '^$' | head -25 | sed 's/^/  perf /'
      PERF_PID=
    fi
    done
    start_nginx "ngx-$c-$run" "$NGX_LOC"
    n0=$(tree_cpu "$NGX_PID")
    ng=$(lat "$NGX_PORT" "$c")
    n1=$(tree_cpu "$NGX_PID")
    stop_pid "$NGX_PID"
    echo "nginx delay: $(err "$ng")"
    # the same clients send the same number of requests (fusebox's count)
    echo "  process cpu per request: $(awk -v a="$n0" -v b="$n1" -v n="${nreq:-1}" 'BEGIN { printf "%.1f us", (b - a) / 1e3 / n }') (nginx: master and workers)"
    awk -v a="$(kv "$fb" lat_p99)" -v b="$(kv "$ng" lat_p99)" 'BEGIN { ea = a - 100; eb = b - 100; r = eb < 0.5 ? 0.5 : eb;
      printf "p99 error ratio fusebox / nginx: %.2fx\n", ea / r }'
  done
done
echo "# stage times in ms (p50 p90 p99 max over every delayed request of the case)"
exit $status
