#!/usr/bin/env bash
# bench/report_memory.sh [SIZES_MB...] - peak resident size of `fusebox report`
# and `fusebox report --json` against the size of the trace (issue 29: the
# goal is flat, memory bounded by the run, not the trace). Default sizes:
# 10 100 1000 MB. Each trace is generated (bench/gen_trace.py: a session,
# logical requests of 1-4 attempts - 503 with retry-after, a cut stream, a
# good answer - with request and response headers, and a done line), judged
# twice, and deleted. Peak RSS: GNU time's %M (the child's ru_maxrss),
# else python's getrusage(RUSAGE_CHILDREN), one python per command.
# Reference in the same run: `wc -c` of the same trace (the cost of reading
# it at all). Needs python3 and ~1.2x the largest size free in $TMPDIR.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
bench_build
command -v python3 >/dev/null || die "needs python3"
sizes=("$@"); [ ${#sizes[@]} = 0 ] && sizes=(10 100 1000)

peak() { # peak RSS (KB), seconds and exit status of: $@ (stdout to /dev/null)
  local f="$WORK/time.out" rc
  if /usr/bin/time -f '%M %e' -o "$f" true 2>/dev/null; then  # GNU time
    /usr/bin/time -f '%M %e' -o "$f" "$@" >/dev/null 2>&1; rc=$?
    echo "$(tail -1 "$f") $rc"
  else  # ru_maxrss of a child of python starts at python's own size
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.time()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "%.1f" % (time.time() - t), rc)
PY
  fi
}

printf '%-8s %10s %12s %14s %14s %10s %10s\n' trace_MB attempts wc_KB report_KB json_KB report_s json_s
for mb in "${sizes[@]}"; do
  t="$WORK/t$mb.jsonl"
  n=$(python3 "$BENCH_DIR/gen_trace.py" "$t" "$mb") || die "cannot write $t"
  read -r wkb _ _ < <(peak wc -c "$t")
  read -r rkb rs rrc < <(peak "$FUSEBOX_BIN" report "$t")
  read -r jkb js jrc < <(peak "$FUSEBOX_BIN" report "$t" --json "$WORK/r.json")
  [ "$rrc" -le 1 ] && [ "$jrc" -le 1 ] || die "report exited $rrc / $jrc on $t"
  printf '%-8s %10s %12s %14s %14s %10s %10s\n' "$mb" "$n" "$wkb" "$rkb" "$jkb" "$rs" "$js"
  rm -f "$t" "$WORK/r.json"
done
