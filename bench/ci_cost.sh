#!/usr/bin/env bash
# bench/ci_cost.sh - what the CI gate itself costs (issue 6): wall time of
# `fusebox run` on the standard library (scenarios/, guard client, default
# time scale and -j) and of each unit suite (build-bench/tests/unit_*),
# with hyperfine (Debian): RUNS runs each after one warm-up, mean ± stddev
# and min…max. Also user+sys CPU, which a shared machine disturbs less.
#
#   bash bench/ci_cost.sh            # RUNS=3
set -euo pipefail
source "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-3}
TESTS=${TESTS:-$ROOT/build-bench/tests}

bench_build
need hyperfine hyperfine
need jq jq
if ! ls "$TESTS"/unit_* >/dev/null 2>&1; then
  cmake --build "$ROOT/build-bench" -j2 >/dev/null || die "cannot build the unit suites"
fi

cmds=("$FUSEBOX_BIN run --quiet $ROOT/scenarios")
names=("fusebox run scenarios/ (guard)")
for t in "$TESTS"/unit_*; do
  [ -x "$t" ] || continue
  cmds+=("$t"); names+=("$(basename "$t")")
done

bench_header
echo "# ci_cost: hyperfine --warmup 1 --runs $RUNS; fusebox run with its defaults (-j 4, --time-scale 0.1, guard client)"
printf '| %-32s | %16s | %16s | %10s | %10s | %6s |\n' command "wall mean ± sd" "min … max" "user" "sys" runs
printf '|----------------------------------|------------------|------------------|------------|------------|--------|\n'
status=0
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
exit $status
