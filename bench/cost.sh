#!/usr/bin/env bash
# bench/cost.sh - the guard's overhead in instructions (issue 6), from
# valgrind --tool=callgrind (counts instructions, so it repeats on a noisy
# machine). Three clients against `fusebox serve` on 127.0.0.1:
#   guard ok       guard_cost: guard_chat, scenario `chat {}`
#   guard retried  guard_cost --retry: scenario `{ fail { status = 503 }, chat {} }`,
#                  distinct bodies (each run its own --tag: the server keys
#                  requests by body), backoff 0.001 s: every call = 2 requests
#   plain curl     curl_cost: the same POST with a plain libcurl easy handle
#                  per request (the reference of the goals)
#   curl kept      curl_cost --reuse: one easy handle, connection kept alive
#                  (shown for comparison; no goal)
# Each runs twice, with N1 and N2 calls; per call = (Ir(N2) - Ir(N1)) /
# (N2 - N1), so process start-up and libcurl's global init cancel out.
# Only the client runs under valgrind; the server runs natively.
#
#   bash bench/cost.sh                # N1=20 N2=220, RUNS=2
#
# Goals (issue 13), each a ratio to plain curl per call in the same run:
# guard ok <= GOAL_OK (1.2x), retried once <= GOAL_RETRY (2.2x). Exit 1
# when a run misses one, 2 when the bench itself cannot run.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-2}
N1=${N1:-20}
N2=${N2:-220}
GUARD_BUILD=${GUARD_BUILD:-$ROOT/build-bench}
GOAL_OK=${GOAL_OK:-1.2}
GOAL_RETRY=${GOAL_RETRY:-2.2}

bench_build
need valgrind valgrind
need pkg-config pkg-config
if [ ! -f "$GUARD_BUILD/libfusebox_guard.a" ]; then
  cmake -S "$ROOT" -B "$GUARD_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
    cmake --build "$GUARD_BUILD" --target fusebox_guard -j2 >/dev/null || die "cannot build the guard library"
fi
make -s -C "$BENCH_DIR" OUT="$BENCH_OUT" GUARD_BUILD="$GUARD_BUILD" cost >/dev/null ||
  die "cannot build guard_cost/curl_cost (needs libcurl, libcjson and zlib dev packages)"

cat >"$WORK/ok.lua" <<'EOF'
return scenario { name = "bench: cost ok", provider = { chat {} } }
EOF
cat >"$WORK/retry.lua" <<'EOF'
return scenario { name = "bench: cost retried", provider = { fail { status = 503 }, chat {} } }
EOF
start_server "$WORK/ok.lua" ""; OK_PORT=$SRV_PORT
start_server "$WORK/retry.lua" ""; RT_PORT=$SRV_PORT

# ir PROG ARGS...: total instructions (Ir) of one run under callgrind.
ir() {
  local out="$WORK/cg.$RANDOM.out" line
  line=$(valgrind --tool=callgrind --callgrind-out-file="$out" "$@" 2>"$out.log") ||
    { cat "$out.log" >&2; die "$* failed: $line"; }
  echo "$line" >>"${COST_LOG:-/dev/null}"
  awk '/^(summary|totals):/ {print $2; exit}' "$out"
  rm -f "$out" "$out.log"
}

bench_header
echo "# cost: valgrind $(valgrind --version | sed 's/valgrind-//'), callgrind; per call = (Ir(N=$N2) - Ir(N=$N1)) / $((N2 - N1)); libcurl $(curl-config --version 2>/dev/null | cut -d' ' -f2)"
printf '| %-3s | %-26s | %14s | %14s | %14s | %12s | %9s | %7s | %4s |\n' run client "Ir N=$N1" "Ir N=$N2" "Ir per call" "per request" "x curl" goal met
printf '|-----|----------------------------|----------------|----------------|----------------|--------------|-----------|---------|------|\n'
status=0
for run in $(seq "$RUNS"); do
  declare -A A=() B=()
  A[curl]=$(ir "$BENCH_OUT/curl_cost" --url "http://127.0.0.1:$OK_PORT/v1" --n "$N1" --tag "r$run-n1")
  B[curl]=$(ir "$BENCH_OUT/curl_cost" --url "http://127.0.0.1:$OK_PORT/v1" --n "$N2" --tag "r$run-n2")
  A[kept]=$(ir "$BENCH_OUT/curl_cost" --url "http://127.0.0.1:$OK_PORT/v1" --n "$N1" --tag "r$run-k1" --reuse)
  B[kept]=$(ir "$BENCH_OUT/curl_cost" --url "http://127.0.0.1:$OK_PORT/v1" --n "$N2" --tag "r$run-k2" --reuse)
  A[ok]=$(ir "$BENCH_OUT/guard_cost" --url "http://127.0.0.1:$OK_PORT/v1" --n "$N1" --tag "r$run-n1")
  B[ok]=$(ir "$BENCH_OUT/guard_cost" --url "http://127.0.0.1:$OK_PORT/v1" --n "$N2" --tag "r$run-n2")
  A[retry]=$(ir "$BENCH_OUT/guard_cost" --url "http://127.0.0.1:$RT_PORT/v1" --n "$N1" --tag "r$run-n1" --retry)
  B[retry]=$(ir "$BENCH_OUT/guard_cost" --url "http://127.0.0.1:$RT_PORT/v1" --n "$N2" --tag "r$run-n2" --retry)
  curl_per=$(( (B[curl] - A[curl]) / (N2 - N1) ))
  for k in curl kept ok retry; do
    case $k in
      curl) lab="plain libcurl POST"; r=1; g="" ;;
      kept) lab="plain libcurl, kept-alive"; r=1; g="" ;;
      ok) lab="guard_chat, ok"; r=1; g=$GOAL_OK ;;
      retry) lab="guard_chat, retried once"; r=2; g=$GOAL_RETRY ;;
    esac
    per=$(( (B[$k] - A[$k]) / (N2 - N1) ))
    awk -v run="$run" -v lab="$lab" -v a="${A[$k]}" -v b="${B[$k]}" -v per="$per" -v r="$r" -v c="$curl_per" -v g="$g" 'BEGIN {
      x = per / c
      met = g == "" ? "" : (x <= g + 0 ? "yes" : "NO")
      printf "| %-3s | %-26s | %14d | %14d | %14d | %12d | %8.2fx | %7s | %4s |\n", run, lab, a, b, per, per / r, x,
        g == "" ? "" : sprintf("<=%.2gx", g), met
      exit met == "NO" }' || status=1
  done
  unset A B
done
echo "# per request = per call / HTTP requests per call (retried: 2); x curl = per call / plain curl per call."
echo "# goals (issue 13): ok <= ${GOAL_OK}x, retried once <= ${GOAL_RETRY}x plain curl, instructions per call, same run."
[ "$status" = 0 ] || echo "# cost: a goal was missed (exit 1)" >&2
exit $status
