#!/usr/bin/env bash
# Nothing lost: kill -9 of fusebox serve mid-run leaves a trace whose every
# line parses, and fusebox report judges what completed and says the trace is
# incomplete. A trace path that cannot be written is an error at start.
. "$(dirname "$0")/lib.sh"
pid=
at_exit '[ -n "$pid" ] && kill -9 "$pid"'
need_fusebox
need_cmd curl awk
need_python json

cat > "$tmp/s.lua" <<'LUA'
return scenario {
  name = "killed mid-run",
  provider = { fail { status = 503 }, chat { content = "ok" } },
  expect = { attempts = { min = 1, max = 3 }, max_requests = 10 },
}
LUA
"$bin" serve "$tmp/s.lua" --port 0 --trace "$tmp/t.jsonl" > "$tmp/out" 2>&1 &
pid=$!
wait_port_line "$tmp/out"
port=$(awk '/^port /{print $2}' "$tmp/out")
url="http://127.0.0.1:$port/v1/chat/completions"
curl -s -o /dev/null "$url" -d '{"a":1}'
curl -s -o /dev/null "$url" -d '{"a":1}'
curl -s -o /dev/null --max-time 5 "$url" -d '{"a":2}' &
kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
wait

python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/t.jsonl" && ok || bad "a line of the killed trace does not parse"
grep -q '"ev":"done"' "$tmp/t.jsonl" && bad "a killed trace should have no done line" || ok
"$bin" report "$tmp/t.jsonl" > "$tmp/report" 2>&1; rc=$?
[ $rc = 0 ] && ok || { bad "report exit $rc"; cat "$tmp/report"; }
grep -qi "incomplete" "$tmp/report" && ok || { bad "report does not say the trace is incomplete"; cat "$tmp/report"; }

# Cut the last line in the middle, as a crash during a write would.
head -c -7 "$tmp/t.jsonl" > "$tmp/cut.jsonl"
"$bin" report "$tmp/cut.jsonl" > "$tmp/report2" 2>&1; rc=$?
[ $rc -le 1 ] && grep -qi "incomplete" "$tmp/report2" && ok || { bad "cut trace: exit $rc"; cat "$tmp/report2"; }

# Not a trace at all: exit 2 with a clear message.
echo "hello" > "$tmp/junk.jsonl"
"$bin" report "$tmp/junk.jsonl" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "junk.jsonl" "$tmp/err" && ok || bad "junk trace: exit $rc, $(cat "$tmp/err")"

# An unwritable trace path fails at start, not later.
"$bin" serve "$tmp/s.lua" --trace /nonexistent-dir/t.jsonl > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "cannot write trace" "$tmp/err" && ok || bad "unwritable trace: exit $rc, $(cat "$tmp/err")"

finish
