#!/usr/bin/env bash
# One redaction rule for every output (issue 11, item 2; sim/redact.c): a
# client sends every form of key (secret header names by pattern, a space
# before the colon, key-shaped values in other headers, ?key= in the query)
# and prints keys on stderr and stdout; the trace (serve and exec), the
# scenario import writes from a log and from that trace, and the JSON,
# JUnit and HTML reports of exec never hold one. (record: record_hostile.sh.)
. "$(dirname "$0")/lib.sh"
pids=()
at_exit 'for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p"; done; wait'
need_fusebox
need_cmd curl awk bash
SECRETS="HDRSECRETX1 HDRSECRETX2 HDRSECRETX3 HDRSECRETX4 HDRSECRETX5 HDRSECRETX6 SPACESECRET7
 0123456789abcdef0123456789abcdef VALSECRET9 AIzaQUERYSECRET10 STDERRSECRET11 STDOUTSECRET12
 RESPHDRSECRET13 RESPBODYSECRET14 LOGQUERYSECRET15 ENDHDRSECRET16 ENDHDRSECRET17 ENDHDRSECRET18"
# clean WHAT FILE...: none of the secrets is in the files, and they hold text.
clean() {
  local what=$1; shift
  for f in "$@"; do [ -s "$f" ] || { bad "$what: $f is empty or missing"; return; }; done
  local s hit=
  for s in $SECRETS; do grep -l -- "$s" "$@" > /dev/null 2>&1 && hit="$hit $s"; done
  [ -z "$hit" ] && ok || bad "$what wrote:$hit"
}

# The client: every form of key on the wire, keys in its own output.
cat > "$tmp/client.sh" <<'SH'
#!/usr/bin/env bash
curl -s -o /dev/null "${OPENAI_BASE_URL}/chat/completions?key=AIzaQUERYSECRET10abcdefghijklmnop" \
  -H 'x-goog-api-key: HDRSECRETX1' -H 'openai-api-key: HDRSECRETX2' \
  -H 'anthropic-api-key: HDRSECRETX3' -H 'ocp-apim-subscription-key: HDRSECRETX4' \
  -H 'x-auth-token: HDRSECRETX5' -H 'Cookie: session=HDRSECRETX6' \
  -H 'Authorization : Bearer SPACESECRET7abcdef' \
  -H 'api-key: 0123456789abcdef0123456789abcdef' \
  -H 'X-Debug: sk-ant-VALSECRET9abcdefgh' \
  -H 'Content-Type: application/json' -d '{"model":"m","messages":[]}'
echo "calling with Authorization: Bearer sk-proj-STDERRSECRET11abcdef" >&2
echo "answer sk-STDOUTSECRET12abcdef"
SH
chmod +x "$tmp/client.sh"
scen="$src/scenarios/transient/http_503.lua"

# --- serve: the trace ---------------------------------------------------------
"$bin" serve "$scen" --port 0 --trace "$tmp/serve.jsonl" > "$tmp/serve.out" 2> "$tmp/serve.err" &
spid=$!; pids+=("$spid")
port=
for _ in $(seq 250); do
  port=$(awk '/^port /{print $2}' "$tmp/serve.out" 2>/dev/null); [ -n "$port" ] && break; sleep 0.02
done
OPENAI_BASE_URL="http://127.0.0.1:$port/v1" bash "$tmp/client.sh" > /dev/null 2>&1
OPENAI_BASE_URL="http://127.0.0.1:$port/v1" bash "$tmp/client.sh" > /dev/null 2>&1
kill -INT "$spid"; wait "$spid" 2>/dev/null
clean "serve's trace" "$tmp/serve.jsonl"
grep -q '"arrive"' "$tmp/serve.jsonl" && ok || bad "the trace has no arrival: $(head -3 "$tmp/serve.jsonl")"
grep -q '"x-goog-api-key":"\[redacted\]"' "$tmp/serve.jsonl" && ok || bad "x-goog-api-key not redacted by name"

# --- import: from a log, and from the trace ------------------------------------
cat > "$tmp/log.jsonl" <<'LOG'
{"t":0,"path":"/v1/chat/completions?key=LOGQUERYSECRET15","status":429,"headers":{"retry-after":"1","X-Debug-Token":"Bearer sk-RESPHDRSECRET13abc","X-Echo":"sk-ant-RESPHDRSECRET13abc"},"body":{"error":{"message":"bad key sk-proj-RESPBODYSECRET14abc","type":"rate_limit_error"}}}
{"t":1000,"path":"/v1/chat/completions","status":200,"body":{"choices":[{"message":{"content":"key=RESPBODYSECRET14 Bearer RESPBODYSECRET14abc"}}]}}
LOG
"$bin" import "$tmp/log.jsonl" -o "$tmp/imp.lua" > /dev/null 2> "$tmp/imp.err"
[ $? = 0 ] && ok || bad "import of the log failed: $(cat "$tmp/imp.err")"
clean "import of a log" "$tmp/imp.lua"
"$bin" import "$tmp/serve.jsonl" -o "$tmp/imp2.lua" > /dev/null 2> "$tmp/imp2.err"
[ $? = 0 ] && ok || bad "import of the trace failed: $(cat "$tmp/imp2.err")"
clean "import of a trace" "$tmp/imp2.lua"

# --- exec: trace and every report --------------------------------------------
"$bin" exec --quiet --trace-dir "$tmp/ex" --json "$tmp/r.json" --junit "$tmp/r.xml" \
  --html "$tmp/r.html" "$scen" -- bash "$tmp/client.sh" > /dev/null 2> "$tmp/exec.err"
clean "exec's reports and trace" "$tmp/r.json" "$tmp/r.xml" "$tmp/r.html" $(ls "$tmp"/ex/*.jsonl)
grep -q "calling with Authorization: \[redacted\]" "$tmp/r.json" && ok || bad "the command's stderr is not in the JSON report, redacted"

# --- headers a scenario sends (end.headers): trace, reports, terminal -------
cat > "$tmp/resp_hdr.lua" <<'LUA'
return scenario {
  name = "secret response headers",
  provider = {
    fail { status = 503, retry_after = 0, headers = {
      ["X-Debug-Token"] = "Bearer sk-ENDHDRSECRET16abcdef",
      ["Set-Cookie"] = "session=ENDHDRSECRET17; Path=/",
      ["X-Echo"] = "key sk-ant-ENDHDRSECRET18abcdef" } },
    chat {},
  },
  client = { attempts = 3, deadline = 10 },
  expect = { attempts = 2, outcome = "ok" },
}
LUA
"$bin" run --trace-dir "$tmp/rh" --json "$tmp/rh.json" --junit "$tmp/rh.xml" \
  --html "$tmp/rh.html" "$tmp/resp_hdr.lua" > "$tmp/rh.out" 2> "$tmp/rh.err"
[ $? = 0 ] && ok || bad "run of the response-header scenario failed: $(cat "$tmp/rh.out" "$tmp/rh.err")"
clean "run's trace, reports and terminal (response headers)" "$tmp/rh.json" "$tmp/rh.xml" \
  "$tmp/rh.html" "$tmp/rh.out" $(ls "$tmp"/rh/*.jsonl)
grep -q '"Set-Cookie":"\[redacted\]"' "$tmp"/rh/*.jsonl && ok || bad "Set-Cookie not redacted by name in end.headers"
"$bin" report "$tmp"/rh/*.jsonl --json "$tmp/rh2.json" > "$tmp/rh2.out" 2>&1
clean "report of that trace" "$tmp/rh2.json" "$tmp/rh2.out"

finish
