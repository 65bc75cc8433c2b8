#!/usr/bin/env bash
# fusebox learn infers a client's retry policy from the wire (issue 28):
# tests/data/learn/policy_client.py is told a policy (six of them: an
# SDK-like one, a stingy one, a capped one with a new key per attempt, a
# retry-everything wrapper, a jittered one, one that retries a 429 only
# with a Retry-After), `learn` probes it, and
# `diff-policy` finds no fact that differs from the profile written for
# that policy by hand. The built-in clients' facts are read back too; bad
# input is exit 2.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json urllib.request
cd "$src"
d=tests/data/learn

# the six run side by side, in real time: they mostly sleep (under --warp
# the client's own time per request would be multiplied into every gap)
pids=()
for c in sdk_like stingy capped wrapper jittered ra_only; do
  POLICY="$(cat "$d/$c.json")" "$bin" learn -j 2 --max-wait 12 --name "$c" -o "$tmp/$c.lua" \
    -- python3 "$d/policy_client.py" 2> "$tmp/$c.err" &
  pids+=($!)
done
i=0
for c in sdk_like stingy capped wrapper jittered ra_only; do
  wait "${pids[$i]}"
  rc=$?
  i=$((i + 1))
  [ $rc = 0 ] || { bad "$c: learn exit $rc: $(cat "$tmp/$c.err")"; continue; }
  "$bin" diff-policy --tolerance 0.35 "$d/$c.lua" "$tmp/$c.lua" > "$tmp/$c.diff" 2>&1 && ok \
    || bad "$c: learned another policy: $(cat "$tmp/$c.diff"); learned: $(grep -v doc "$tmp/$c.lua")"
done
# two learned policies differ in exactly the facts their written ones do
facts() { "$bin" diff-policy --tolerance 0.35 "$1" "$2" | grep ' → ' | sed 's/: .*//' | sort; }
want=$(facts "$d/stingy.lua" "$d/capped.lua")
got=$(facts "$tmp/stingy.lua" "$tmp/capped.lua")
[ -n "$want" ] && [ "$want" = "$got" ] && ok || bad "learned stingy vs capped differ in: $got; written: $want"
grep -q "probes in" "$tmp/capped.err" && ok || bad "no count of probes and time taken: $(cat "$tmp/capped.err")"
# a learned profile judges like a written one: exec --profile loads it
"$bin" check "$tmp/stingy.lua" > /dev/null 2>&1 || true
"$bin" exec --profile "$tmp/stingy.lua" --json "$tmp/st.json" scenarios/examples/fail_503_then_ok.lua \
  -- env POLICY="$(cat "$d/stingy.json")" python3 "$d/policy_client.py" > /dev/null 2>&1
python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["results"][0]
v = [x for x in r["verdicts"] if x["name"] == "profile"]
sys.exit(0 if v and v[0]["status"] == "pass" else 1)' "$tmp/st.json" && ok || bad "the learned profile does not judge its own client"

# the built-in clients, in-process
# (at time scale 0.2, not 0.02: a millisecond of noise is then 5 ms of a
# scenario second, not 50, and naive's fixed 1 s wait reads as 1 s)
"$bin" learn --client naive --time-scale 0.2 -q -o "$tmp/naive.lua" --markdown "$tmp/naive.md" \
  --html "$tmp/naive.html" --confidence 0.5
grep -q "retry_after = { honoured = false }" "$tmp/naive.lua" && grep -q 'retries = { "400-499", ">=500",' "$tmp/naive.lua" \
  && grep -q "max_attempts = 3," "$tmp/naive.lua" && ok || bad "naive learned as: $(cat "$tmp/naive.lua")"
python3 - "$tmp/naive.lua" <<'PY' && ok || bad "naive's fixed 1 s wait learned as: $(grep backoff "$tmp/naive.lua")"
import re, sys
m = re.search(r"base = ([0-9.]+), factor = ([0-9.]+)", open(sys.argv[1]).read())
sys.exit(0 if m and 0.9 <= float(m.group(1)) <= 1.3 and 0.9 <= float(m.group(2)) <= 1.1 else 1)
PY
grep -q "| attempts per call | 3 |" "$tmp/naive.md" && ok || bad "no policy card: $(cat "$tmp/naive.md")"
# each fact with its evidence, and how many plays stand behind the yes/no ones
grep -q -- "-- a second attempt came after: 400, 401," "$tmp/naive.lua" \
  && grep -q -- "-- each yes/no fact from 2 plays" "$tmp/naive.lua" && grep -q "^- retried: " "$tmp/naive.md" \
  && ok || bad "no evidence in the learned profile: $(cat "$tmp/naive.lua")"
grep -q "<tr><td>attempts per call</td><td>3</td></tr>" "$tmp/naive.html" && grep -q "</html>" "$tmp/naive.html" \
  && ok || bad "no HTML card: $(cat "$tmp/naive.html")"
# (guard reads decimal seconds too: guard/retry_after.c)
"$bin" learn --client sdk-default --time-scale 0.2 -q -o "$tmp/sdk.lua"
grep -q 'forms = { "retry-after-ms", "seconds", "decimal", "date", }' "$tmp/sdk.lua" && grep -q "max_attempts = 3," "$tmp/sdk.lua" \
  && grep -q "retries = { 408, 409, 429, \">=500\"" "$tmp/sdk.lua" && ok || bad "sdk-default learned as: $(cat "$tmp/sdk.lua")"

# bad input
"$bin" learn > "$tmp/bad.out" 2>&1
[ $? = 2 ] && grep -q "give --client NAME or -- CMD" "$tmp/bad.out" && ok || bad "learn without a client: $(cat "$tmp/bad.out")"
"$bin" learn --client naive --repeats 0 > "$tmp/bad.out" 2>&1
[ $? = 2 ] && ok || bad "--repeats 0 accepted"
"$bin" learn --client naive --confidence 0.2 > "$tmp/bad.out" 2>&1
[ $? = 2 ] && ok || bad "--confidence 0.2 accepted"
"$bin" learn --client naive --api vertex > "$tmp/bad.out" 2>&1
[ $? = 2 ] && ok || bad "--api vertex accepted"
"$bin" learn -- true > "$tmp/bad.out" 2>&1
[ $? = 2 ] && grep -q "sent no request" "$tmp/bad.out" && ok || bad "a silent client: $(cat "$tmp/bad.out")"
"$bin" learn -- /nonexistent/client > "$tmp/bad.out" 2>&1
[ $? = 2 ] && ok || bad "a command that does not exist: $(cat "$tmp/bad.out")"
finish
