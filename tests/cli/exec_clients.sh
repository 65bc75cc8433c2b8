#!/usr/bin/env bash
# fusebox exec with small clients of our own, each with one known flaw
# (tests/cli/clients/toy_client.py): the evidence each leaves is pinned --
# the unserved 404 and its trace marks, the exit status, the attempts, the
# stream the client did not ask for, the kill while it honoured a long
# Retry-After -- and a well-behaved client on the same scenarios. Also:
# --without (skipped with the reason, never pass), --tags/--skip-tags, -j N
# giving the same results as one at a time, a command that cannot start and
# a scenario with nothing to judge (exit 2), no temp dir left behind.
set -uo pipefail
src=${FUSEBOX_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${FUSEBOX_BIN:-$src/build/fusebox}
cd "$src"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
toy="python3 tests/cli/clients/toy_client.py"
I=examples/interop
scen="$I/drop_then_ok.lua $I/stream_drop.lua $I/retry_after_seconds.lua $I/fail_401.lua $I/effect_response_lost.lua"

# Plays the five scenarios with one toy mode; keeps traces in $tmp/MODE.
play() {  # $1 = mode, rest = extra exec options
  local m=$1; shift
  # shellcheck disable=SC2086
  "$bin" exec --quiet --timeout 20 -j 2 "$@" --json "$tmp/$m.json" --trace-dir "$tmp/$m" $scen \
    -- $toy "$m" > "$tmp/$m.log" 2>&1
}
# Facts per scenario from the traces: name arrivals exit unserved streamed-arrivals timed_out
facts() {  # $1 = trace dir
  python3 - "$1" <<'PY'
import glob, json, os, sys
for p in sorted(glob.glob(sys.argv[1] + "/*.jsonl")):
    ev = [json.loads(l) for l in open(p) if l.strip()]
    arr = [e for e in ev if e["ev"] == "arrive"]
    cl = [e for e in ev if e["ev"] == "client"]
    name = os.path.basename(p).split("-", 2)[2][:-6]
    print(name, len(arr), cl[0]["exit_code"] if cl else "-",
          sum(1 for e in arr if e.get("unserved")), sum(1 for e in arr if e.get("stream")),
          "killed" if cl and cl[0].get("timed_out") else "-")
PY
}
expect_facts() {  # $1 = mode, $2 = expected facts
  if diff <(facts "$tmp/$1") <(printf '%s\n' "$2") > "$tmp/$1.diff"; then
    ok "$1: $3"
  else
    bad "$1: $3"; cat "$tmp/$1.diff"
  fi
}

# name arrivals exit unserved streamed killed
play good
expect_facts good "drop_then_ok 2 0 0 0 -
stream_drop 2 0 0 2 -
retry_after_seconds 2 0 0 0 -
fail_401 1 1 0 0 -
effect_response_lost 2 0 0 0 -" "retries the transient faults, streams, stops after the 401"

play wrong-path
expect_facts wrong-path "drop_then_ok 1 1 1 0 -
stream_drop 1 1 1 1 -
retry_after_seconds 1 1 1 0 -
fail_401 1 1 1 0 -
effect_response_lost 2 0 0 0 -" "every chat call unserved (and traced so), exit 1"
if grep -q 'fusebox_unknown_endpoint' "$tmp"/wrong-path/*drop_then_ok.stderr &&
   grep -q 'OPENAI_BASE_URL=http' "$tmp"/wrong-path/*drop_then_ok.stderr; then
  ok "the unserved 404 names fusebox's error type and the variable to set"
else
  bad "the unserved 404 body"; cat "$tmp"/wrong-path/*drop_then_ok.stderr
fi

play no-retry
expect_facts no-retry "drop_then_ok 1 1 0 0 -
stream_drop 1 1 0 1 -
retry_after_seconds 1 1 0 0 -
fail_401 1 1 0 0 -
effect_response_lost 1 1 0 0 -" "one attempt each, exit 1"

play exit-nonzero
expect_facts exit-nonzero "drop_then_ok 2 3 0 0 -
stream_drop 2 3 0 2 -
retry_after_seconds 2 3 0 0 -
fail_401 1 1 0 0 -
effect_response_lost 2 3 0 0 -" "recovers on the wire, exits 3"

play ignore-stream
expect_facts ignore-stream "drop_then_ok 2 0 0 0 -
stream_drop 4 1 0 0 -
retry_after_seconds 2 0 0 0 -
fail_401 1 1 0 0 -
effect_response_lost 2 0 0 0 -" "never asks for the stream the scenario plays"

# Killed while it honours a 30 s Retry-After (the scenario's verdict stays
# for reports to judge; the trace says it was killed after the 429).
"$bin" exec --quiet --timeout 6 --json "$tmp/ra.json" --trace-dir "$tmp/honour-ra" \
  tests/cli/data/retry_after_long.lua -- $toy honour-ra > "$tmp/ra.log" 2>&1
expect_facts honour-ra "retry_after_long 1 137 0 0 killed" "killed by --timeout while waiting out Retry-After: 30"

# --without stream: the stream scenario is skipped with the reason, never played.
"$bin" exec --quiet --without stream --json "$tmp/wo.json" --trace-dir "$tmp/wo" \
  "$I/stream_drop.lua" "$I/fail_401.lua" -- $toy good > "$tmp/wo.log" 2>&1
if python3 - "$tmp/wo.json" <<'PY'
import json, sys
r = {x["file"].split("/")[-1]: x for x in json.load(open(sys.argv[1]))["results"]}
s = r["stream_drop.lua"]["verdicts"]
assert [(v["name"], v["status"]) for v in s] == [("capability", "n/a")], s
assert r["stream_drop.lua"]["status"] == "n/a", r["stream_drop.lua"]
assert "--without stream" in s[0]["evidence"], s
assert r["stream_drop.lua"].get("arrivals", 0) == 0
assert any(v["name"] == "command_finished" for v in r["fail_401.lua"]["verdicts"])
PY
then ok "--without stream: skipped with the reason, not played"; else bad "--without stream"; fi
"$bin" exec --quiet --without effects --json "$tmp/wo2.json" "$I/effect_response_lost.lua" \
  -- $toy good > /dev/null 2>&1
rc=$?
grep -q -- '--without effects' "$tmp/wo2.json" && [ $rc = 0 ] && ok "--without effects: skipped, exit 0" \
  || bad "--without effects (exit $rc)"
"$bin" exec --quiet --without teleport "$I/fail_401.lua" -- true > /dev/null 2>&1
[ $? = 2 ] && ok "--without with an unknown capability is exit 2" || bad "--without teleport"

# --tags / --skip-tags select by the scenarios' tags.
"$bin" exec --quiet --tags stream,effects --json "$tmp/tags.json" "$I" -- $toy good > /dev/null 2>&1
got=$(python3 -c 'import json,sys; print(" ".join(sorted(r["file"].split("/")[-1] for r in json.load(open(sys.argv[1]))["results"])))' "$tmp/tags.json")
[ "$got" = "effect_response_lost.lua stream_drop.lua stream_no_end.lua" ] && ok "--tags stream,effects" || bad "--tags: $got"
"$bin" exec --quiet --tags interop --skip-tags stream,ratelimit,effects,transient,quota --json "$tmp/skip.json" "$I" -- $toy good > /dev/null 2>&1
got=$(python3 -c 'import json,sys; print(" ".join(sorted(r["file"].split("/")[-1] for r in json.load(open(sys.argv[1]))["results"])))' "$tmp/skip.json")
[ "$got" = "fail_401.lua" ] && ok "--skip-tags" || bad "--skip-tags: $got"

# -j 4 plays at once, each scenario on its own port, with the same results.
"$bin" exec --quiet -j 1 --json "$tmp/j1.json" --trace-dir "$tmp/j1" $scen -- $toy good > /dev/null 2>&1
"$bin" exec --quiet -j 4 --json "$tmp/j4.json" --trace-dir "$tmp/j4" $scen -- $toy good > /dev/null 2>&1
ports=$(cat "$tmp"/j4/*.jsonl | python3 -c 'import json,sys; print(len({json.loads(l)["port"] for l in sys.stdin if "\"session\"" in l}))')
if diff <(facts "$tmp/j1") <(facts "$tmp/j4") > /dev/null && [ "$ports" = 5 ]; then
  ok "-j 4: same facts as -j 1, five ports"
else
  bad "-j 4 (ports $ports)"; diff <(facts "$tmp/j1") <(facts "$tmp/j4")
fi

# --warp 10: the client's clock runs ten times fast, the server plays at 0.1;
# the 2 s Retry-After is still waited out (on the client's clock) and judged
# at that scale. A missing libfaketime is a usage error that says so.
if [ -n "$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null)" ]; then
  "$bin" exec --quiet --warp 10 --json "$tmp/warp.json" --trace-dir "$tmp/warp" \
    "$I/retry_after_seconds.lua" -- $toy good > "$tmp/warp.log" 2>&1; rc=$?
  scale=$(head -n 1 "$tmp"/warp/*.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["time_scale"])')
  # The real gap between the 429 and the retry (trace times are real ms).
  gap=$(python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
a = [e["t"] for e in ev if e["ev"] == "arrive"]
e = [x["t"] for x in ev if x["ev"] == "end"]
print(int(a[1] - e[0]) if len(a) > 1 and e else -1)' "$tmp"/warp/*.jsonl)
  if [ $rc = 0 ] && [ "$scale" = 0.1 ] && [ "$(facts "$tmp/warp")" = "retry_after_seconds 2 0 0 0 -" ] &&
     [ "$gap" -ge 150 ] && [ "$gap" -lt 1500 ]; then
    ok "--warp 10: Retry-After: 2 waited out in ${gap} ms real, judged at time scale 0.1"
  else
    bad "--warp 10 (exit $rc, scale $scale, gap $gap ms)"; cat "$tmp/warp.log"
  fi
else
  echo "skip: --warp (libfaketime is not installed: apt-get install libfaketime)"
fi
FUSEBOX_LIBFAKETIME=/nonexistent/libfaketime.so.1 "$bin" exec --quiet --warp 10 "$I/fail_401.lua" \
  -- true > "$tmp/nowarp.log" 2>&1
[ $? = 2 ] && grep -q 'needs libfaketime' "$tmp/nowarp.log" && ok "--warp without libfaketime is exit 2, saying what to install" || bad "--warp without libfaketime"

# A command that cannot be started, and a scenario with nothing to judge: exit 2.
"$bin" exec --quiet "$I/fail_401.lua" -- /nonexistent/client > "$tmp/ns.log" 2>&1
[ $? = 2 ] && grep -q 'cannot start /nonexistent/client' "$tmp/ns.log" && ok "a missing program is exit 2" || bad "missing program"
"$bin" exec --quiet "$I/fail_401.lua" -- sh -c 'no-such-client-xyz' > "$tmp/ns2.log" 2>&1
[ $? = 2 ] && grep -q 'could not be started' "$tmp/ns2.log" && ok "a shell that cannot find it is exit 2" || bad "sh -c missing"
printf 'return scenario { name = "nothing", provider = { chat {} } }\n' > "$tmp/none.lua"
printf 'return scenario { name = "empty", provider = { chat {} }, expect = {} }\n' > "$tmp/empty.lua"
for f in none empty; do
  "$bin" exec --quiet "$tmp/$f.lua" -- true > "$tmp/$f.log" 2>&1; rc=$?
  "$bin" run --quiet "$tmp/$f.lua" > "$tmp/$f.run.log" 2>&1; rrc=$?
  if [ $rc = 2 ] && [ $rrc = 2 ] && grep -q 'nothing to judge' "$tmp/$f.log" && grep -q 'nothing to judge' "$tmp/$f.run.log"; then
    ok "exec and run refuse a scenario with $( [ $f = none ] && echo no || echo an empty) expect table"
  else
    bad "nothing to judge ($f: exec $rc, run $rrc)"
  fi
done

# No temp dir left behind without --trace-dir (exec makes it under $TMPDIR).
mkdir -p "$tmp/t"
TMPDIR=$tmp/t "$bin" exec --quiet "$I/fail_401.lua" -- $toy good > /dev/null 2>&1
TMPDIR=$tmp/t "$bin" exec --quiet "$I/fail_401.lua" -- /nonexistent/client > /dev/null 2>&1
TMPDIR=$tmp/t "$bin" exec --quiet "$tmp/none.lua" -- true > /dev/null 2>&1
left=$(ls -A "$tmp/t" | wc -l)
[ "$left" = 0 ] && ok "no temp dir left behind" || bad "temp dirs left: $(ls "$tmp/t")"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
