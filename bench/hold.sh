#!/usr/bin/env bash
# bench/hold.sh - how many held connections one `fusebox serve` keeps, and
# at what memory, beside nginx holding the same (issue 6). For each N and
# run, three cases, each on a fresh server:
#   hang     fusebox `hang {}` (issue 2): its idle RSS (the reference), then
#            N connections each sending a complete POST /v1/chat/completions;
#            once the trace has N arrivals the server's VmRSS/VmHWM are read
#            and every connection is checked still open; then all are closed
#            and the server must record N ends.
#   delay    fusebox `delay { 5, chat {} }`: the same, then every connection
#            must receive its 200 answer (completed = N).
#   nginx    nginx + echo module (libnginx-mod-http-echo): `echo_sleep 5;
#            echo <the same body>;` - master + workers RSS summed; every
#            connection must receive its 200 answer.
# "x nginx" = RSS held / nginx's RSS held in the same run (issue 6 goal:
# <= 1.5x at 10,000).
#
#   bash bench/hold.sh            # N = 1000 5000 10000, 2 runs each
#   HOLD_N="10000" RUNS=3 CASES="delay nginx" bash bench/hold.sh
#
# Exit status 1 when any row misses its goal.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

HOLD_N=${HOLD_N:-"1000 5000 10000"}
RUNS=${RUNS:-2}
CASES=${CASES:-"hang delay nginx"}
GOAL_KB=$((100 * 1000 * 1000 / 1024))   # issue 2: 100 MB (decimal) in kB
GOAL_X=${GOAL_X:-1.5}                    # issue 6: <= 1.5x nginx

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
cat >"$WORK/delay5.lua" <<'EOF'
return scenario {
  name = "bench: hold 5 s",
  doc = [[Every request is answered after 5 s.]],
  provider = { delay { 5, chat {} } },
}
EOF
cat >"$WORK/chat.lua" <<'EOF'
return scenario { name = "bench: chat", provider = { chat {} } }
EOF
# nginx answers with the same body fusebox's chat {} gives (captured once).
need curl curl
start_server "$WORK/chat.lua" ""
NGX_BODY=$(curl -s -X POST -H 'Content-Type: application/json' \
  --data '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hold"}],"max_tokens":16}' \
  "http://127.0.0.1:$SRV_PORT/v1/chat/completions") || die "cannot capture a fusebox answer"
stop_server
case $NGX_BODY in *"'"*|"") die "captured body is empty or has a single quote" ;; esac
NGX_LOC="location = /v1/chat/completions {
      default_type application/json;
      echo_sleep 5;
      echo '$NGX_BODY';
    }"

listen_drops() { awk '/^TcpExt:/ {if (!h) {split($0, k); h=1} else {split($0, v); for (i in k) if (k[i]=="ListenOverflows") print v[i]}}' /proc/net/netstat; }

bench_header
echo "# hold: cases $CASES; client $BENCH_OUT/hold_client, open-file limit $(ulimit -n); nginx $(nginx -v 2>&1 | sed 's/.*: //') + echo module, workers = $(nproc)"
printf '| %-3s | %6s | %-6s | %6s | %6s | %9s | %9s | %9s | %7s | %7s | %9s | %7s | %-17s | %8s | %5s |\n' \
  run N case held errors completed "idle RSS" "RSS held" "KB/conn" "x nginx" "PSS held" "x nginx" "answer min/p50/max" connect goal
printf '|-----|--------|--------|--------|--------|-----------|-----------|-----------|---------|---------|-----------|---------|-------------------|----------|-------|\n'
status=0
for run in $(seq "$RUNS"); do
  for n in $HOLD_N; do
    declare -A L=()
    for cs in $CASES; do
      d0=$(listen_drops)
      trace=""; args=()
      case $cs in
        hang)  trace="$WORK/hold-$run-$n.jsonl"; start_server "$WORK/hang.lua" "$trace"; pid=$SRV_PID; port=$SRV_PORT ;;
        delay) trace="$WORK/hold5-$run-$n.jsonl"; start_server "$WORK/delay5.lua" "$trace"; pid=$SRV_PID; port=$SRV_PORT
               args=(--expect-response) ;;
        nginx) start_nginx "ngx-hold-$run-$n" "$NGX_LOC"; sleep 0.3
               pid=$NGX_PID$(pgrep -P "$NGX_PID" | sed 's/^/,/' | tr -d '\n'); port=$NGX_PORT
               args=(--expect-response) ;;
      esac
      sleep 0.3  # let the idle server settle before the reference reading
      set +e
      line=$(timeout 300 "${NICE[@]}" "$BENCH_OUT/hold_client" --port "$port" --n "$n" --pid "$pid" \
               ${trace:+--trace "$trace"} --settle-ms "${SETTLE_MS:-500}" "${args[@]}")
      rc=$?
      set -e
      if [ "$cs" = nginx ]; then stop_pid "$NGX_PID"; else stop_server; rm -f "$trace"; fi
      d1=$(listen_drops)
      [ -n "$line" ] || { echo "hold_client failed (exit $rc) for $cs" >&2; status=1; continue; }
      echo "$cs $line" >>"${HOLD_LOG:-/dev/null}"
      L[$cs]=$line
      [ "$((d1 - d0))" -eq 0 ] || L[$cs.drops]=$((d1 - d0))
      [ $rc -eq 0 ] || L[$cs.rc]=$rc
    done
    ngx_rss=$(kv "${L[nginx]:-}" rss_kb); ngx_pss=$(kv "${L[nginx]:-}" pss_kb)
    for cs in $CASES; do
      line=${L[$cs]:-}
      [ -n "$line" ] || continue
      rss=$(kv "$line" rss_kb); errors=$(kv "$line" errors); ends=$(kv "$line" ends)
      ok=yes
      [ "$errors" -eq 0 ] || ok=NO
      [ -z "${L[$cs.rc]:-}" ] || ok=NO
      [ "$cs" = hang ] && [ "$n" -ge 10000 ] && [ "$rss" -gt "$GOAL_KB" ] && ok="NO (>100MB)"
      [ "$cs" != nginx ] && [ "$ends" -ne "$(kv "$line" arrived)" ] && ok="NO (ends $ends)"
      if [ "$cs" = delay ] && [ "$n" -ge 10000 ] && [ -n "$ngx_rss" ]; then
        # on PSS: the RSS of nginx's master + workers counts their shared pages once per process
        awk -v a="$(kv "$line" pss_kb)" -v b="$ngx_pss" -v g="$GOAL_X" 'BEGIN { exit !(a / b <= g) }' || ok="NO (>${GOAL_X}x)"
      fi
      case $ok in yes) ;; *) status=1 ;; esac
      awk -v run="$run" -v n="$n" -v cs="$cs" -v held="$(kv "$line" held)" -v err="$errors" \
          -v comp="$(kv "$line" completed)" -v idle="$(kv "$line" idle_rss_kb)" -v rss="$rss" -v ngx="$ngx_rss" \
          -v a0="$(kv "$line" answer_min_ms)" -v a5="$(kv "$line" answer_p50_ms)" -v a9="$(kv "$line" answer_max_ms)" \
          -v c="$(kv "$line" connect_ms)" -v ok="$ok" -v pss="$(kv "$line" pss_kb)" -v npss="$ngx_pss" 'BEGIN {
        x = ngx > 0 ? sprintf("%6.2fx", rss / ngx) : ""
        xp = npss > 0 ? sprintf("%6.2fx", pss / npss) : ""
        ans = a5 != "" ? sprintf("%.0f/%.0f/%.0f", a0, a5, a9) : ""
        printf "| %-3s | %6s | %-6s | %6s | %6s | %9s | %6.1f MB | %6.1f MB | %7.2f | %7s | %6.1f MB | %7s | %-17s | %5s ms | %5s |\n",
          run, n, cs, held, err, comp == "" ? "-" : comp, idle*1.024/1000, rss*1.024/1000,
          (rss-idle)*1.024/n, x, pss*1.024/1000, xp, ans, c, ok }'
      [ -z "${L[$cs.drops]:-}" ] || echo "#   note: $cs: ${L[$cs.drops]} listen-queue overflows during this case"
    done
    unset L
  done
done
echo "# MB = 10^6 bytes; KB/conn = (RSS held - idle) / N in 10^3 bytes; x nginx = RSS held / nginx's RSS held"
echo "# (master + workers, summed) at the same N in the same run; PSS = proportional set size (smaps_rollup), shared"
echo "# pages split between processes, so nginx's master + workers count their libraries once; answer = ms from sending the request to its answer's"
echo "# last byte (delay cases); connect = all N connected and sent."
echo "# goals: hang at N >= 10000: no errors, RSS < 100 MB (issue 2); delay at N >= 10000: no errors, all"
echo "# answered, PSS <= ${GOAL_X}x nginx's (issue 6); every fusebox case: the server recorded N ends."
exit $status
