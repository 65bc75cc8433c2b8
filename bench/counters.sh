#!/usr/bin/env bash
# bench/counters.sh - where a loaded server's CPU goes (issue 30): perf
# stat of the server process under the same wrk load, for the bare
# libmicrohttpd responder and `fusebox serve` three ways, printed per
# answered request; then (PERF_RECORD=1, the default) a perf record
# profile of each, by symbol.
#
# Cases, each on a fresh server, A B A B over RUNS runs:
#   bare       bench/bare_mhd.c, the same bytes as fusebox's answer
#   steps      fusebox, fixed steps (provider = { chat {...} }), no --trace
#   fn         fusebox, a Lua provider function, no --trace
#   fn+trace   fusebox, the provider function, --trace FILE
#
# The counters are the kernel's software events and tracepoints: this VM's
# perf has no hardware counters (`perf stat true` says cycles and
# instructions are "not supported"), so there is no IPC or cache-miss
# figure; the instruction counts come from callgrind (bench/serve_cost.sh).
# Per loop: system calls of each kind and context switches per request.
#
#   bash bench/counters.sh                 # THREADS=1 CONNS=50 DURATION=5 RUNS=2
#   PERF_RECORD=0 CASES="bare fn" bash bench/counters.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-2}
CONNS=${CONNS:-50}
THREADS=${THREADS:-1}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-2}
CASES=${CASES:-bare steps fn fn+trace}
PERF_RECORD=${PERF_RECORD:-1}

bench_build
need wrk wrk
need curl curl
need perf linux-perf
bench_nofile 4096

BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":16}'
cat >"$WORK/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
EOF
cat >"$WORK/fn.lua" <<'EOF'
return scenario {
  name = "bench: counters, function",
  provider = function(req) return chat { content = "hello" } end,
}
EOF
cat >"$WORK/steps.lua" <<'EOF'
return scenario {
  name = "bench: counters, fixed steps",
  provider = { chat { content = "hello" } },
}
EOF

start_server "$WORK/fn.lua" ""
curl -s -D "$WORK/resp.hdr" -o "$WORK/resp.body" -X POST -H 'Content-Type: application/json' \
  --data "$BODY" "http://127.0.0.1:$SRV_PORT/v1/chat/completions" || die "cannot capture a fusebox answer"
stop_server
CTYPE=$(awk -F': *' 'tolower($1) == "content-type" {sub(/\r$/, "", $2); print $2}' "$WORK/resp.hdr")
REQID=$(awk -F': *' 'tolower($1) == "x-request-id" {sub(/\r$/, "", $2); print $2}' "$WORK/resp.hdr")

EVENTS=task-clock,context-switches,cpu-migrations,page-faults,raw_syscalls:sys_enter
for s in epoll_wait epoll_ctl ppoll recvfrom sendmsg sendto write read futex accept4; do
  EVENTS+=",syscalls:sys_enter_$s"
done

# start CASE: starts the case's server; sets PID and PORT.
start() {
  case $1 in
    bare)
      "${NICE[@]}" "$BENCH_OUT/bare_mhd" "$WORK/resp.body" "$CTYPE" "$REQID" >"$WORK/bare.out" 2>&1 &
      PID=$!; SERVER_PIDS+=("$PID")
      for _ in $(seq 100); do grep -q '^port' "$WORK/bare.out" && break; sleep 0.05; done
      PORT=$(awk '/^port/ {print $2}' "$WORK/bare.out") ;;
    steps) start_server "$WORK/steps.lua" ""; PID=$SRV_PID PORT=$SRV_PORT ;;
    fn) start_server "$WORK/fn.lua" ""; PID=$SRV_PID PORT=$SRV_PORT ;;
    fn+trace) start_server "$WORK/fn.lua" "$WORK/t.jsonl"; PID=$SRV_PID PORT=$SRV_PORT ;;
  esac
}

url() { echo "http://127.0.0.1:$PORT/v1/chat/completions"; }

# user_sys PID: the process's user and system CPU ticks so far (all its
# threads), "utime stime".
user_sys() { sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12, $13}'; }
# steal_ticks: the ticks the hypervisor took from this machine so far.
steal_ticks() { awk '$1 == "cpu" {print $9 + 0}' /proc/stat; }
STEAL0=$(steal_ticks)

bench_header
echo "# counters: perf $(perf version | awk '{print $3}'), software events and tracepoints of the server process;" \
     "wrk -t$THREADS -c$CONNS -d${DURATION}s (POST), warm-up ${WARMUP}s; $RUNS runs, cases in turn"
printf '| %-3s | %-8s | %8s | %9s | %7s | %7s | %5s | %6s | %6s | %7s | %6s | %6s | %6s | %6s | %6s | %6s | %6s | %6s |\n' \
  run case "req/s" "cpu us/rq" "user us" "sys us" CPUs "cs/rq" "mig/rq" "sysc/rq" epollw epollc ppoll recv send write futex faults
printf '|-----|----------|----------|-----------|---------|---------|-------|--------|--------|---------|--------|--------|--------|--------|--------|--------|--------|--------|\n'
for run in $(seq "$RUNS"); do
  for k in $CASES; do
    start "$k"
    wrk_stats "$(url)" "$WARMUP" >/dev/null
    read -r u0 s0 < <(user_sys "$PID")
    perf stat -x, -e "$EVENTS" -p "$PID" -o "$WORK/stat" -- sleep "$DURATION" &
    sp=$!
    r=$(wrk_stats "$(url)" "$DURATION")
    wait "$sp" || true
    read -r u1 s1 < <(user_sys "$PID")
    [ "$k" = bare ] && stop_pid "$PID" || stop_server
    rm -f "$WORK/t.jsonl"
    read -r rps _ _ bad se n <<<"$r"
    awk -F, -v run="$run" -v k="$k" -v rps="$rps" -v n="$n" -v d="$DURATION" \
        -v ut=$((u1 - u0)) -v st=$((s1 - s0)) -v tick="$TICK_US" '
      $3 != "" { v[$3] = $1 + 0 }
      END {
        # wrk counts what it answered in its own DURATION; perf counts the
        # same seconds; per request = count / answered.
        tc = v["task-clock"]; rq = n > 0 ? n : 1
        printf "| %-3s | %-8s | %8.0f | %9.2f | %7.2f | %7.2f | %5.2f | %6.3f | %6.3f | %7.2f | %6.3f | %6.3f | %6.3f | %6.3f | %6.3f | %6.3f | %6.3f | %6.3f |\n",
          run, k, rps, tc * 1000 / rq, ut * tick / rq, st * tick / rq, tc / (d * 1000),
          v["context-switches"] / rq, v["cpu-migrations"] / rq,
          v["raw_syscalls:sys_enter"] / rq, v["syscalls:sys_enter_epoll_wait"] / rq,
          v["syscalls:sys_enter_epoll_ctl"] / rq, v["syscalls:sys_enter_ppoll"] / rq,
          v["syscalls:sys_enter_recvfrom"] / rq, (v["syscalls:sys_enter_sendmsg"] + v["syscalls:sys_enter_sendto"]) / rq,
          v["syscalls:sys_enter_write"] / rq, v["syscalls:sys_enter_futex"] / rq, v["page-faults"] / rq
      }' "$WORK/stat"
    [ "$bad" = 0 ] && [ "$se" = 0 ] || echo "#   $k: $bad non-2xx, $se socket errors"
  done
done
echo "# cpu us/rq: task-clock of the server's threads / answered requests; CPUs: task-clock / wall time."
echo "# user us, sys us: its user and system time a request (/proc/PID/stat ticks around the same window)."
echo "# steal: the host took $(( $(steal_ticks) - STEAL0 )) ticks from this machine during the runs (/proc/stat);" \
     "a VM that does not report steal shows 0 and charges that time to whatever ran."
echo "# cs/rq: context switches (voluntary: a thread waits; involuntary: preempted); mig: CPU migrations."
echo "# sysc/rq: every system call; then epoll_wait, epoll_ctl, ppoll, recvfrom, sendmsg+sendto, write, futex."

if [ "$PERF_RECORD" = 1 ]; then
  for k in $CASES; do
    start "$k"
    wrk_stats "$(url)" "$WARMUP" >/dev/null
    perf record -q -e cpu-clock -F 999 -g -p "$PID" -o "$WORK/rec.data" -- sleep "$DURATION" 2>/dev/null &
    sp=$!
    wrk_stats "$(url)" "$DURATION" >/dev/null
    wait "$sp" || true
    [ "$k" = bare ] && stop_pid "$PID" || stop_server
    rm -f "$WORK/t.jsonl"
    echo "## perf record -e cpu-clock -F 999 -g, $k: self time by DSO, then by symbol (>= 1 %)"
    perf report -i "$WORK/rec.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep -v '^#' | grep '%' | head -8
    perf report -i "$WORK/rec.data" --no-children --sort sym --percent-limit 1 --stdio -g none 2>/dev/null |
      grep -v '^#' | grep '%' | head -40
  done
fi
