#!/usr/bin/env bash
# bench/serve_cost.sh - instructions per request of `fusebox serve` (issue 13),
# from valgrind --tool=callgrind: deterministic whatever the machine's load,
# unlike req/s. The server plays a Lua provider function (called for every
# request, as in throughput.sh), without a trace and with --trace FILE; curl
# sends N1, then N2 identical keep-alive POSTs (one curl process, -K config),
# and per request = (Ir(N2) - Ir(N1)) / (N2 - N1), so start-up and shutdown
# cancel out. Only the server runs under valgrind. No goal: the throughput
# goals are ratios of req/s (throughput.sh); this says where instructions go.
#
# The bare libmicrohttpd responder (bench/bare_mhd.c, same pool) is measured
# the same way, and each row also says its instructions without memset:
# libmicrohttpd zeroes its 16 KiB connection pool after every request with
# `rep stosb`, which callgrind counts once per byte (~24.5k "instructions"
# a request, the same in both, and about 0.3 us of real time). With it, the
# two look 1.9x apart; without it, fusebox's own work shows (issue 30).
#
#   bash bench/serve_cost.sh            # N1=50 N2=550
set -euo pipefail
source "$(dirname "$0")/lib.sh"

N1=${N1:-50}
N2=${N2:-550}
bench_build
need valgrind valgrind
need curl curl

cat >"$WORK/fn.lua" <<'LUA'
return scenario {
  name = "bench: serve cost",
  provider = function(req) return chat { content = "hello" } end,
}
LUA
BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":16}'

# ir N TRACE: the server's total Ir and memset's for N requests, "TOTAL
# MEMSET" (TRACE "" = no --trace, "bare" = bench/bare_mhd).
ir() {
  local n=$1 tr=$2 out="$WORK/sc.$RANDOM" port="" i cmd
  if [ "$tr" = bare ]; then
    cmd=("$BENCH_OUT/bare_mhd" "$WORK/resp.body" application/json req_bench)
  else
    cmd=("$FUSEBOX_BIN" serve "$WORK/fn.lua" --port 0 --bind 127.0.0.1 ${tr:+--trace "$tr"})
  fi
  valgrind --tool=callgrind --callgrind-out-file="$out.cg" "${cmd[@]}" >"$out.log" 2>&1 &
  local vp=$!
  SERVER_PIDS+=("$vp")
  for i in $(seq 600); do
    port=$(awk '/^port [0-9]+$/ {print $2; exit}' "$out.log")
    [ -n "$port" ] && break
    kill -0 "$vp" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$out.log" >&2; die "fusebox serve did not start under valgrind"; }
  : >"$out.cfg"
  for i in $(seq "$n"); do
    printf 'url = "http://127.0.0.1:%s/v1/chat/completions"\noutput = "/dev/null"\n' "$port" >>"$out.cfg"
  done
  curl -s -K "$out.cfg" -X POST -H 'Content-Type: application/json' --data "$BODY" || die "curl failed"
  kill -TERM "$vp"; wait "$vp" || true
  local total memset
  total=$(awk '/^(summary|totals):/ {print $2; exit}' "$out.cg")
  memset=$(callgrind_annotate "$out.cg" 2>/dev/null | awk '/memset/ {gsub(",", "", $1); s += $1} END {print s + 0}')
  echo "$total $memset"
  rm -f "$out.cg" "$out.log" "$out.cfg"
}

# The bare responder serves one fusebox answer's bytes.
start_server "$WORK/fn.lua" ""
curl -s -o "$WORK/resp.body" -X POST -H 'Content-Type: application/json' \
  --data "$BODY" "http://127.0.0.1:$SRV_PORT/v1/chat/completions" || die "cannot capture a fusebox answer"
stop_server

bench_header
echo "# serve_cost: valgrind $(valgrind --version | sed 's/valgrind-//'), callgrind, server only; per request = (Ir(N=$N2) - Ir(N=$N1)) / $((N2 - N1))"
printf '| %-22s | %14s | %14s | %12s | %16s | %8s |\n' case "Ir N=$N1" "Ir N=$N2" "per request" "without memset" "x bare"
printf '|------------------------|----------------|----------------|--------------|------------------|----------|\n'
BARE_OWN=""
for mode in bare none file; do
  case $mode in
    bare) tr=bare lab="bare libmicrohttpd" ;;
    none) tr="" lab="no --trace" ;;
    file) tr="$WORK/t.jsonl" lab="--trace FILE" ;;
  esac
  read -r a am <<<"$(ir "$N1" "$tr")"
  read -r b bm <<<"$(ir "$N2" "$tr")"
  per=$(( (b - a) / (N2 - N1) ))
  own=$(( (b - bm - a + am) / (N2 - N1) ))
  [ "$mode" = bare ] && BARE_OWN=$own
  printf '| %-22s | %14d | %14d | %12d | %16d | %7.2fx |\n' "$lab" "$a" "$b" "$per" "$own" \
    "$(awk -v o="$own" -v b="$BARE_OWN" 'BEGIN {print o / b}')"
  rm -f "$WORK/t.jsonl"
done
echo "# user-space instructions only: the kernel's share (write(2), TCP) is not counted."
