#!/usr/bin/env bash
# fusebox serve, driven by the real curl binary as a user would: port 0 picks
# a free port and prints it, faults reach curl as the scenario says, SIGINT
# stops the server with the trace complete; check and list behave.
. "$(dirname "$0")/lib.sh"
pid=
at_exit '[ -n "$pid" ] && kill "$pid"'
need_fusebox
need_cmd curl awk
need_python json

cat > "$tmp/s.lua" <<'LUA'
return scenario {
  name = "curl sees every fault",
  provider = function(req)
    local k = req.body and req.body.k or "chat"
    if k == "429" then return fail { status = 429, retry_after = 2 } end
    if k == "drop" then return drop {} end
    if k == "reset" then return reset {} end
    if k == "hang" then return hang {} end
    if k == "stream" then return stream { chunks = { "a", "b" } } end
    return chat { content = "hi" }
  end,
}
LUA
"$bin" serve "$tmp/s.lua" --port 0 --trace "$tmp/t.jsonl" > "$tmp/out" 2> "$tmp/err" &
pid=$!
wait_port_line "$tmp/out"
port=$(awk '/^port /{print $2}' "$tmp/out")
[ -n "$port" ] && ok || { bad "serve printed no port"; cat "$tmp/err"; exit 1; }
url="http://127.0.0.1:$port/v1/chat/completions"
req() { curl -s -o "$tmp/body" -D "$tmp/hdr" -w '%{http_code}' --max-time "${2:-3}" "$url" -H 'Authorization: Bearer sk-SECRET-cli' -d "{\"k\":\"$1\"}"; }

[ "$(req chat)" = 200 ] && grep -q '"content":"hi"' "$tmp/body" && ok || bad "chat"
[ "$(req 429)" = 429 ] && grep -qi '^retry-after: 2' "$tmp/hdr" && ok || bad "429 Retry-After"
req drop >/dev/null; rc=$?; [ $rc = 52 ] && ok || bad "drop: curl exit $rc, want 52 (empty reply)"
req reset >/dev/null; rc=$?; [ $rc = 56 ] && ok || bad "reset: curl exit $rc, want 56 (recv failure)"
req hang 0.3 >/dev/null; rc=$?; [ $rc = 28 ] && ok || bad "hang: curl exit $rc, want 28 (timeout)"
[ "$(req stream)" = 200 ] && grep -q 'data: \[DONE\]' "$tmp/body" && ok || bad "stream"

kill -INT "$pid"; wait "$pid"; rc=$?; pid=
[ $rc = 0 ] && ok || bad "serve exit $rc after SIGINT"
tail -1 "$tmp/t.jsonl" | grep -q '"ev":"done"' && ok || bad "trace has no done line"
python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$tmp/t.jsonl" && ok || bad "trace lines do not parse"
grep -q SECRET "$tmp/t.jsonl" && bad "the API key reached the trace" || ok

# check: a bad scenario is file:line and exit 2; list shows names.
printf 'return scenario {\n  name = "x",\n  provider = { chat { colour = 1 } },\n}\n' > "$tmp/bad.lua"
"$bin" check "$tmp/bad.lua" 2> "$tmp/cerr"; rc=$?
[ $rc = 2 ] && grep -q "bad.lua:3:" "$tmp/cerr" && ok || { bad "check: exit $rc, $(cat "$tmp/cerr")"; }
"$bin" check "$tmp/s.lua" > /dev/null && ok || bad "check of a good scenario"
"$bin" list "$tmp/s.lua" | grep -q "curl sees every fault" && ok || bad "list"
"$bin" serve "$tmp/bad.lua" 2>/dev/null; [ $? = 2 ] && ok || bad "serve of a bad scenario should exit 2"
"$bin" bogus 2>/dev/null; [ $? = 2 ] && ok || bad "unknown command should exit 2"
"$bin" serve --help | grep -q -- "--port" && ok || bad "serve --help"

finish
