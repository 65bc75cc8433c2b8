#!/usr/bin/env bash
# bench/heap_calls.sh - heap calls (malloc, calloc, realloc, free) per request
# of `fusebox serve` (issue 30), from callgrind's call counts: deterministic,
# as bench/serve_cost.sh's instructions. The same server and requests as
# serve_cost.sh (a Lua provider function; fixed steps; the function with
# --trace FILE); per request = (calls(N2) - calls(N1)) / (N2 - N1).
#
#   bash bench/heap_calls.sh            # N1=50 N2=550
set -euo pipefail
source "$(dirname "$0")/lib.sh"

N1=${N1:-50}
N2=${N2:-550}
bench_build
need valgrind valgrind
need curl curl

cat >"$WORK/fn.lua" <<'LUA'
return scenario {
  name = "bench: heap calls, function",
  provider = function(req) return chat { content = "hello" } end,
}
LUA
cat >"$WORK/steps.lua" <<'LUA'
return scenario {
  name = "bench: heap calls, fixed steps",
  provider = { chat { content = "hello" } },
}
LUA
BODY='{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}],"max_tokens":16}'

# calls N SCENARIO TRACE: "malloc calloc realloc free" of the server for N requests.
calls() {
  local n=$1 sc=$2 tr=$3 out="$WORK/hc.$RANDOM" port="" i
  valgrind --tool=callgrind --callgrind-out-file="$out.cg" "$FUSEBOX_BIN" serve "$sc" \
    --port 0 --bind 127.0.0.1 ${tr:+--trace "$tr"} >"$out.log" 2>&1 &
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
  python3 "$BENCH_DIR/cg_calls.py" "$out.cg" ${BY_CALLER:+--by-caller}
  rm -f "$out.cg" "$out.log" "$out.cfg"
}

bench_header
echo "# heap_calls: valgrind $(valgrind --version | sed 's/valgrind-//'), callgrind call counts, server only;" \
     "per request = (calls(N=$N2) - calls(N=$N1)) / $((N2 - N1))"
printf '| %-24s | %7s | %7s | %7s | %7s |\n' case malloc calloc realloc free
printf '|--------------------------|---------|---------|---------|---------|\n'
for k in fn steps fn+trace; do
  case $k in
    fn) sc=$WORK/fn.lua tr="" lab="function, no --trace" ;;
    steps) sc=$WORK/steps.lua tr="" lab="fixed steps, no --trace" ;;
    fn+trace) sc=$WORK/fn.lua tr="$WORK/t.jsonl" lab="function, --trace FILE" ;;
  esac
  read -r a1 a2 a3 a4 <<<"$(calls "$N1" "$sc" "$tr")"
  read -r b1 b2 b3 b4 <<<"$(calls "$N2" "$sc" "$tr")"
  rm -f "$WORK/t.jsonl"
  awk -v lab="$lab" -v d=$((N2 - N1)) -v a="$a1 $a2 $a3 $a4" -v b="$b1 $b2 $b3 $b4" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    printf "| %-24s | %7.2f | %7.2f | %7.2f | %7.2f |\n", lab, (y[1]-x[1])/d, (y[2]-x[2])/d, (y[3]-x[3])/d, (y[4]-x[4])/d }'
done
echo "# calls into glibc's allocator per request (Lua's allocator is realloc/free: its new blocks count as realloc)."
