#!/usr/bin/env bash
# fusebox hunt finds a bug that only one two-step schedule shows (issue 27):
# tests/data/hunt/ra_after_503.py honours Retry-After except on the attempt
# after a 503. Hunted through exec (under --warp), the finding is shrunk to
# exactly "503, then 429 Retry-After: 1", the guarded client passes it, and
# the same seed writes the same file twice. The fixed client (the bug
# switched off) is not broken within the same budget.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json urllib.request
[ -n "$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null)" ] \
  || missing "needs libfaketime (apt-get install libfaketime)"
cd "$src"

client=tests/data/hunt/ra_after_503.py
field() { python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
space=(--steps 5xx,429 --call chat --max-attempts 2 --max-retry-after 5 --warp 10 -j 2 --budget 120)

for n in 1 2; do
  "$bin" hunt --seed 3 "${space[@]}" --out "$tmp/h$n" -q -- python3 "$client"
  rc=$?
  [ $rc = 1 ] && ok || bad "run $n: exit $rc, want 1 (found)"
done
h="$tmp/h1/hunt.json"
[ "$(field "$h" "d['findings'][0]['schedule']")" = "chat: 503, 429 Retry-After: 1, then answered" ] && ok \
  || bad "shrunk to: $(field "$h" "d['findings'][0]['schedule']")"
[ "$(field "$h" "d['findings'][0]['verdict']")" = retry_after_honoured ] && ok \
  || bad "verdict: $(field "$h" "d['findings'][0]['verdict']")"
[ "$(field "$h" "d['findings'][0]['reference']")" = "guard passes" ] && ok || bad "not checked against the guard"
[ "$(field "$h" "d['findings'][0]['replay']")" = "fails again" ] && ok \
  || bad "the replay: $(field "$h" "d['findings'][0]['replay']")"
cmp -s "$tmp/h1/finding-1.lua" "$tmp/h2/finding-1.lua" && ok \
  || bad "the same seed wrote another file: $(diff "$tmp/h1/finding-1.lua" "$tmp/h2/finding-1.lua")"
grep -q 'fail { status = 503 },' "$tmp/h1/finding-1.lua" && grep -q 'fail { status = 429, retry_after = 1 },' \
  "$tmp/h1/finding-1.lua" && ok || bad "the scenario does not play the schedule: $(cat "$tmp/h1/finding-1.lua")"

# the replay command it printed reproduces it
"$bin" exec --warp 10 --json "$tmp/replay.json" "$tmp/h1/finding-1.lua" -- python3 "$client" > /dev/null 2>&1
[ "$(field "$tmp/replay.json" "[v['status'] for v in d['results'][0]['verdicts'] if v['name'] == 'retry_after_honoured'][0]")" = fail ] \
  && ok || bad "exec of the finding does not fail retry_after_honoured"

# the fixed client: the same space and budget find nothing
sed 's/wait = 0  # the planted bug/pass/' "$client" > "$tmp/fixed.py"
"$bin" hunt --seed 3 "${space[@]}" --budget 60 -q -- python3 "$tmp/fixed.py"
rc=$?
[ $rc = 0 ] && ok || bad "the fixed client was broken (exit $rc)"
finish
