#!/usr/bin/env bash
# bench/ci_cost.sh - what the CI gate itself costs (issue 6): wall time of
# `fusebox run` on the standard library (scenarios/, guard client, default
# time scale and -j) and of each unit suite (build-bench/tests/unit_*),
# with hyperfine (Debian): RUNS runs each after one warm-up, mean ± stddev
# and min…max. Also user+sys CPU, which a shared machine disturbs less.
#
# Goal (issue 13): `fusebox run` over the standard library (>= 80
# scenarios, default time scale and -j) ends within GOAL (1.2x) of its
# longest scenario's own time, both from the same invocation: wall time
# around the process, the longest scenario's time_ms from its --json.
# Exit 1 when a run misses it (or the library has fewer than 80 scenarios).
# The table shows the -j the run used: by default fusebox's own (issue 13:
# from the scenarios' expected durations, 8..16, since scenarios mostly
# wait); JOBS=N forces -j N.
#
#   bash bench/ci_cost.sh            # RUNS=3
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-3}
TESTS=${TESTS:-$ROOT/build-bench/tests}
GOAL=${GOAL:-1.2}
HYPERFINE=${HYPERFINE:-1}   # 0: only the gate's goal, no hyperfine table
JOBS=${JOBS:-}              # -j for the goal's runs; default: fusebox's own

bench_build
need jq jq
status=0
bench_header
if [ "$HYPERFINE" = 1 ]; then
need hyperfine hyperfine
if ! ls "$TESTS"/unit_* >/dev/null 2>&1; then
  cmake --build "$ROOT/build-bench" -j2 >/dev/null || die "cannot build the unit suites"
fi

cmds=("$FUSEBOX_BIN run --quiet $ROOT/scenarios")
names=("fusebox run scenarios/ (guard)")
for t in "$TESTS"/unit_*; do
  [ -x "$t" ] || continue
  cmds+=("$t"); names+=("$(basename "$t")")
done

echo "# ci_cost: hyperfine --warmup 1 --runs $RUNS; fusebox run with its defaults (-j from its plan, --time-scale 0.2, guard client)"
printf '| %-32s | %16s | %16s | %10s | %10s | %6s |\n' command "wall mean ± sd" "min … max" "user" "sys" runs
printf '|----------------------------------|------------------|------------------|------------|------------|--------|\n'
for i in "${!cmds[@]}"; do
  json="$WORK/hf.$i.json"
  (cd "$ROOT" && hyperfine -N --warmup 1 --runs "$RUNS" --export-json "$json" "${cmds[$i]}" >/dev/null 2>&1) || {
    # hyperfine stops on a non-zero exit; say so and measure anyway
    echo "#   note: ${names[$i]} exits non-zero; timed with --ignore-failure" >&2
    (cd "$ROOT" && hyperfine -N -i --warmup 1 --runs "$RUNS" --export-json "$json" "${cmds[$i]}" >/dev/null 2>&1) || status=1
  }
  jq -r --arg n "${names[$i]}" '.results[0] | "| \($n) | \(.mean*1000|floor/1000) ± \(.stddev*1000|floor/1000) s | \(.min*1000|floor/1000) … \(.max*1000|floor/1000) s | \(.user*1000|floor/1000) s | \(.system*1000|floor/1000) s | \(.times|length) |"' "$json"
done
echo "# wall = elapsed; user/sys = mean CPU seconds of the process and its children."
fi

# The gate's goal: wall time against the longest scenario, same invocation.
echo
printf '| %-3s | %9s | %3s | %10s | %-44s | %10s | %8s | %6s | %4s | %11s |\n' run scenarios -j "wall s" "longest scenario" "its s" "x longest" goal met "load avg"
printf '|-----|-----------|-----|------------|----------------------------------------------|------------|----------|--------|------|-------------|\n'
for run in $(seq "$RUNS"); do
  json="$WORK/run.$run.json"
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s%N)
  (cd "$ROOT" && "$FUSEBOX_BIN" run ${JOBS:+-j "$JOBS"} --json "$json" "$ROOT/scenarios" >"$WORK/run.$run.out" 2>&1) || true
  t1=$(date +%s%N)
  jobs=$(sed -n 's/.*, -j \([0-9]*\),.*/\1/p' "$WORK/run.$run.out" | tail -1)
  [ -s "$json" ] || { echo "# ci_cost: fusebox run wrote no --json" >&2; status=1; continue; }
  read -r n lms lfile < <(jq -r '[.results | length, (max_by(.time_ms) | .time_ms, (.file | sub(".*/scenarios/"; "")))] | @tsv' "$json")
  awk -v run="$run" -v n="$n" -v j="${jobs:-?}" -v w="$(( (t1 - t0) / 1000000 ))" -v l="$lms" -v f="$lfile" -v g="$GOAL" -v ld="$load" 'BEGIN {
    x = w / l; met = (x <= g && n >= 80) ? "yes" : "NO"
    printf "| %-3s | %9d | %3s | %10.3f | %-44s | %10.3f | %7.2fx | <=%.2gx | %4s | %11s |\n", run, n, j, w / 1000, f, l / 1000, x, g, met, ld
    exit met == "NO" }' || status=1
done
echo "# wall clock around one \`fusebox run ${JOBS:+-j $JOBS }--json\` (defaults otherwise; its table to a file); longest = max results[].time_ms of that run; load avg = 1-minute load when it started."
echo "# goal (issue 13): wall <= ${GOAL}x the longest scenario, >= 80 scenarios."
[ "$status" = 0 ] || echo "# ci_cost: a goal was missed (exit 1)" >&2
exit $status
