#!/usr/bin/env bash
# bench/hold.sh - how many hung connections one `fusebox serve` holds, and
# at what memory. For each N: a fresh server playing `hang {}`, its idle
# RSS (the reference), then N connections each sending a complete
# POST /v1/chat/completions; once the trace has N arrivals, the server's
# VmRSS/VmHWM are read and every connection is checked still open; then
# all are closed and the server must record N ends.
#
#   bash bench/hold.sh            # N = 1000 5000 10000, 2 runs each
#   HOLD_N="10000" RUNS=3 bash bench/hold.sh
#
# Goal (issue 2): 10,000 held, no errors, under 100 MB RSS. Exit status 1
# when any row misses its goal.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

HOLD_N=${HOLD_N:-"1000 5000 10000"}
RUNS=${RUNS:-2}
GOAL_KB=$((100 * 1000 * 1000 / 1024))   # 100 MB (decimal) in kB

bench_build
max=0
for n in $HOLD_N; do [ "$n" -gt "$max" ] && max=$n; done
bench_nofile $((max + 256))

cat >"$WORK/hang.lua" <<'EOF'
return scenario {
  name = "bench: hold",
  doc = [[Every request hangs until the client gives up.]],
  provider = { hang {} },
}
EOF

listen_drops() { awk '/^TcpExt:/ {if (!h) {split($0, k); h=1} else {split($0, v); for (i in k) if (k[i]=="ListenOverflows") print v[i]}}' /proc/net/netstat; }

bench_header
echo "# hold: scenario hang {}, client $BENCH_OUT/hold_client, open-file limit $(ulimit -n)"
printf '| %-3s | %6s | %6s | %6s | %9s | %9s | %9s | %6s | %7s | %8s | %8s | %5s |\n' \
  run N held errors "idle RSS" "RSS held" "HWM held" "ratio" "KB/conn" connect arrived goal
printf '|-----|--------|--------|--------|-----------|-----------|-----------|--------|---------|----------|----------|-------|\n'
status=0
for run in $(seq "$RUNS"); do
  for n in $HOLD_N; do
    trace="$WORK/hold-$run-$n.jsonl"
    start_server "$WORK/hang.lua" "$trace"
    sleep 0.3  # let the idle server settle before the reference reading
    d0=$(listen_drops)
    set +e
    line=$(timeout 300 "${NICE[@]}" "$BENCH_OUT/hold_client" --port "$SRV_PORT" --n "$n" --pid "$SRV_PID" \
             --trace "$trace" --settle-ms 1000)
    rc=$?
    set -e
    d1=$(listen_drops)
    stop_server
    [ -n "$line" ] || { echo "hold_client failed (exit $rc)" >&2; status=1; continue; }
    echo "$line" >>"${HOLD_LOG:-/dev/null}"
    held=$(kv "$line" held); errors=$(kv "$line" errors)
    idle=$(kv "$line" idle_rss_kb); rss=$(kv "$line" rss_kb); hwm=$(kv "$line" hwm_kb)
    ends=$(kv "$line" ends)
    ok=yes
    if [ "$n" -ge 10000 ]; then
      { [ "$errors" -eq 0 ] && [ "$rss" -le "$GOAL_KB" ]; } || ok=NO
    else
      [ "$errors" -eq 0 ] || ok=NO
    fi
    [ "$ends" -eq "$n" ] || ok="NO (ends $ends)"
    [ $rc -eq 0 ] && [ "$ok" = yes ] || status=1
    awk -v run="$run" -v n="$n" -v held="$held" -v err="$errors" -v idle="$idle" -v rss="$rss" \
        -v hwm="$hwm" -v c="$(kv "$line" connect_ms)" -v a="$(kv "$line" arrive_ms)" -v ok="$ok" 'BEGIN {
      printf "| %-3s | %6s | %6s | %6s | %6.1f MB | %6.1f MB | %6.1f MB | %5.1fx | %7.2f | %5s ms | %5s ms | %5s |\n",
        run, n, held, err, idle*1.024/1000, rss*1.024/1000, hwm*1.024/1000, rss/idle,
        (rss-idle)*1.024/n, c, a, ok }'
    [ "$((d1 - d0))" -eq 0 ] || echo "#   note: $((d1 - d0)) listen-queue overflows during this run"
  done
done
echo "# MB = 10^6 bytes; ratio = RSS held / RSS idle; KB/conn = (RSS held - idle) / N in 10^3 bytes;"
echo "# connect = all N connected and sent, arrived = trace shows N arrivals (both from the first connect)."
echo "# goal (N >= 10000): no errors and RSS held < 100 MB; every N: the server recorded N ends after the close."
exit $status
