#!/usr/bin/env bash
# Runs the libFuzzer targets, one after the other, each for SECONDS (default
# 30), after replaying its regression inputs once. Builds them first
# (fuzz/build.sh). Prints executions and crashes per target; exits 1 when a
# target crashed (a crash, leak, timeout or out-of-memory) or a regression
# input fails again, 2 on a build or usage error.
#
#   bash fuzz/run.sh                 every target, 30 s each
#   bash fuzz/run.sh 10              every target, 10 s each (CI)
#   bash fuzz/run.sh 600 sse wire    these targets, 10 minutes each
#
# Seeds: fuzz/corpus/NAME, fuzz/regressions/NAME and, for scenario, the
# standard library in scenarios/ (read only). New inputs go
# to fuzz/build/corpus/NAME, crash artifacts to fuzz/build/artifacts/NAME/,
# the log to fuzz/build/logs/NAME.log. Extra libFuzzer flags: $FUZZ_FLAGS.
# FUZZ_NO_BUILD=1 skips the build (for several runs at once on one build).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${FUZZ_BUILD:-$here/build}"
export FUZZ_BUILD="$out"

secs="${1:-30}"
case "$secs" in
  '' | *[!0-9]*) echo "usage: fuzz/run.sh [SECONDS] [TARGET...]" >&2; exit 2 ;;
esac
[ $# -gt 0 ] && shift
targets=("$@")

if [ -z "${FUZZ_NO_BUILD:-}" ]; then
  bash "$here/build.sh" "${targets[@]}" || exit 2
fi
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$out"/fuzz_*; do
    [ -x "$f" ] && targets+=("$(basename "$f" | sed 's/^fuzz_//')")
  done
fi

# The longest input worth trying, per target.
max_len() {
  case "$1" in
    scenario) echo 16384 ;;
    request) echo 8192 ;;
    sse) echo 4096 ;;
    wire) echo 4096 ;;
    frames) echo 8192 ;;
    trace) echo 16384 ;;
    import) echo 16384 ;;
    record) echo 8192 ;;
    api) echo 8192 ;;
    merge) echo 32768 ;;
    control) echo 16384 ;;
    redis) echo 2048 ;;
    h2) echo 8192 ;;
    body) echo 4096 ;;
    *) echo 8192 ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

status=0
summary=()
for t in "${targets[@]}"; do
  bin="$out/fuzz_$t"
  if [ ! -x "$bin" ]; then
    echo "fuzz/run.sh: no target '$t'" >&2
    exit 2
  fi
  corpus="$out/corpus/$t"
  arts="$out/artifacts/$t"
  log="$out/logs/$t.log"
  mkdir -p "$corpus" "$arts" "$out/logs" "$here/corpus/$t" "$here/regressions/$t"
  : >"$log"

  # Every regression input once, each in its own process: each was a crash
  # and must stay fixed.
  regfail=0
  nreg=0
  for r in "$here/regressions/$t"/*; do
    [ -f "$r" ] || continue
    nreg=$((nreg + 1))
    if ! "$bin" -timeout=10 -rss_limit_mb=2048 "$r" >>"$log" 2>&1; then
      echo "fuzz_$t: regression input fails again: $r" >&2
      regfail=$((regfail + 1))
    fi
  done
  # Failing regressions would only stop the fuzzing at once: leave them out.
  seeds=("$here/corpus/$t")
  [ "$regfail" -eq 0 ] && seeds+=("$here/regressions/$t")
  # The standard scenario library seeds the scenario target as it is, not as copies.
  [ "$t" = scenario ] && seeds+=("$here/../scenarios")

  dict=()
  [ -f "$here/dict/$t.dict" ] && dict=(-dict="$here/dict/$t.dict")
  # Failures only: libFuzzer also writes slow-unit-* files, which are not.
  failures() { find "$arts" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' \
    -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l; }
  before="$(failures)"
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$arts/" \
    "${dict[@]}" ${FUZZ_FLAGS:-} \
    "$corpus" "${seeds[@]}" >>"$log" 2>&1
  rc=$?
  after="$(failures)"
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  [ -z "$execs" ] && execs="$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')"
  found=$((after - before))
  if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then found=1; fi
  line="$(printf 'fuzz_%-9s %4ss  %10s execs  %d crash(es)' "$t" "$secs" "${execs:-?}" "$found")"
  [ "$nreg" -gt 0 ] && line="$line  $((nreg - regfail))/$nreg regressions pass"
  if [ "$found" -gt 0 ] || [ "$regfail" -gt 0 ]; then
    line="$line  -> $log"
    status=1
  fi
  echo "$line"
  summary+=("$line")
done

echo "----"
printf '%s\n' "${summary[@]}"
exit "$status"
