#!/usr/bin/env bash
# Faults on real traffic (issue 25 item 4, docs/upstream.md): a local
# upstream (`fusebox serve` on a provider that answers chat, streams, and a
# streamed tool call, and refuses a request without Authorization) stands
# for the real provider; `fusebox exec --upstream` plays upstream{} steps in
# front of it to the real openai-node SDK and judges the run as any run:
#   - fail{429, retry_after=1}, upstream{}: openai-node waits, retries, gets
#     the upstream's answer; every verdict holds, `answer` from attempt 2;
#   - upstream{drop_after=2}, upstream{}: the real stream cut after two
#     frames is traced `cut`, the client's own retry is seen and completes;
#     a client that splices the cut text into the retry's fails `answer`;
#   - upstream{error_after=1}: the dialect's error event in the real stream;
#   - upstream{cut_arguments=true}: the stream closes inside the tool call's
#     arguments (the client holds a piece of them, not JSON);
#   - an unreachable upstream: a 502 from fusebox, traced as such;
#   - the client's key reaches the upstream (else its 401) and is in no
#     trace, report or log.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd node python3
need_node_pkg openai
cd "$src"
key=sk-upstreamtest-0123456789abcdefXYZ
export OPENAI_API_KEY=$key

cat > "$tmp/up.lua" <<'EOF'
return scenario {
  name = "the real provider (a stand-in)",
  provider = function(req)
    if req.headers["authorization"] == nil then
      return fail { status = 401, code = "invalid_api_key", message = "no key" }
    end
    if req.body and req.body.tools then
      return stream { chunks = { "Let me ", "check." }, tool_calls = {
        { id = "call_1", name = "send_email",
          arguments = { to = "ops@example.com", body = "the nightly report is late again" } } } }
    end
    return chat { content = "Real answer from the upstream." }
  end,
}
EOF
pids=()
serve_named up "$tmp/up.lua"
at_exit 'kill -INT ${pids[*]}'
up="http://127.0.0.1:$port_up"

# A client on the real SDK that retries a call whose stream broke, as an
# agent loop does; --splice keeps the broken attempt's text (a bug).
cat > "$tmp/retry.mjs" <<JS
import { createRequire } from 'node:module';
const require = createRequire('$src/examples/clients/node/');
const OpenAI = require('openai').default ?? require('openai');
const client = new OpenAI({ maxRetries: 0 });
const splice = process.argv.includes('--splice');
const tools = process.argv.includes('--tools')
  ? [{ type: 'function', function: { name: 'send_email', parameters: { type: 'object' } } }] : undefined;
let kept = '';
for (let turn = 1; turn <= 3; turn++) {
  let text = '', args = '';
  try {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini', stream: true, tools,
      messages: [{ role: 'user', content: 'Say hello.' }] });
    for await (const ch of stream) {
      const d = ch.choices?.[0]?.delta ?? {};
      text += d.content ?? '';
      for (const t of d.tool_calls ?? []) args += t.function?.arguments ?? '';
    }
    if (args) process.stderr.write('arguments: ' + args + '\n');
    process.stdout.write((splice ? kept : '') + text + '\n');
    process.exit(0);
  } catch (e) {
    process.stderr.write('turn ' + turn + ' broke: ' + (e?.constructor?.name) + ' ' + e?.message +
                         '; partial arguments: [' + args + ']\n');
    kept += text;
  }
}
process.exit(1);
JS

scen() { # NAME PROVIDER-LIST [OUTCOME]: a scenario file at $tmp/NAME.lua
  printf 'return scenario {\n  name = "%s",\n  provider = { %s },\n  expect = { outcome = "%s" },\n}\n' \
    "$1" "$2" "${3:-ok}" > "$tmp/$1.lua"
}
# verdict JSON NAME: the status of verdict NAME in an exec --json report
verdict() {
  python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))["results"][0]
print(next((v["status"] for v in r["verdicts"] if v["name"]==sys.argv[2]),"absent"))' "$1" "$2"
}
# ends TRACE: "step:status:state:how:chunks" of each end event, one a line
ends() {
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get("ev")=="end": print("%s:%s:%s:%s:%s"%(e["step"],e["status"],e["state"],e["how"],e["chunks"]))' "$1"
}
run_exec() { # NAME CLIENT-ARGS...: exec NAME.lua with --upstream; sets rc
  local name=$1
  shift
  rm -rf "$tmp/tr-$name"
  "$bin" exec --upstream "$up" --json "$tmp/$name.json" --trace-dir "$tmp/tr-$name" \
    "$tmp/$name.lua" -- "$@" > "$tmp/$name.out" 2>&1
  rc=$?
}
show() { cat "$tmp/$1.out"; cat "$tmp/tr-$1"/*.stderr 2>/dev/null; ends "$tmp/tr-$1"/*.jsonl; }

# 1. A 429, then the real answer: openai-node's own policy, judged as any run.
printf 'return scenario {\n name = "rl", provider = { fail { status = 429, retry_after = 1 }, upstream {} },\n expect = { retry_after_honoured = true, outcome = "ok" } }\n' > "$tmp/rl.lua"
run_exec rl node examples/clients/node/openai_chat.mjs
got=$(ends "$tmp"/tr-rl/*.jsonl | tr '\n' ' ')
[ $rc = 0 ] && [ "$got" = "fail:429:error_status:complete:0 upstream:200:complete:complete:0 " ] \
  && [ "$(verdict "$tmp/rl.json" retry_after_honoured)" = pass ] \
  && [ "$(verdict "$tmp/rl.json" answer)" = pass ] \
  && grep -qx 'Real answer from the upstream.' "$tmp"/tr-rl/*.stdout && ok \
  || { bad "429 then upstream{}: exit $rc, ends '$got'"; show rl; }

# 2. The real stream cut after two frames, and the client's retry.
scen drop 'upstream { drop_after = 2 }, upstream {}'
run_exec drop node "$tmp/retry.mjs"
got=$(ends "$tmp"/tr-drop/*.jsonl | tr '\n' ' ')
[ $rc = 0 ] && [ "$got" = "upstream:200:cut:dropped:2 upstream:200:complete:complete:8 " ] \
  && [ "$(verdict "$tmp/drop.json" answer)" = pass ] \
  && grep -q 'turn 1 broke' "$tmp"/tr-drop/*.stderr \
  && grep -qx 'Real answer from the upstream.' "$tmp"/tr-drop/*.stdout && ok \
  || { bad "upstream{drop_after=2}: exit $rc, ends '$got'"; show drop; }
# the same cut, and a client that splices the broken attempt into its retry
run_exec drop node "$tmp/retry.mjs" --splice
[ $rc = 1 ] && [ "$(verdict "$tmp/drop.json" answer)" = fail ] && ok \
  || { bad "a client splicing a cut real stream must fail 'answer' (exit $rc)"; show drop; }

# 3. The dialect's in-stream error event after one real frame.
scen err 'upstream { error_after = 1 }, upstream {}'
run_exec err node "$tmp/retry.mjs"
got=$(ends "$tmp"/tr-err/*.jsonl | tr '\n' ' ')
[ $rc = 0 ] && [ "$got" = "upstream:200:error_event:complete:1 upstream:200:complete:complete:8 " ] \
  && grep -q 'turn 1 broke' "$tmp"/tr-err/*.stderr && ok \
  || { bad "upstream{error_after=1}: exit $rc, ends '$got'"; show err; }

# 4. Cut inside the streamed tool call's arguments: the client holds a
#    piece of them that is not JSON, and the trace says `cut`; its retry
#    gets them whole, `valid`.
scen args 'upstream { cut_arguments = true }, upstream {}'
run_exec args node "$tmp/retry.mjs" --tools
got=$(ends "$tmp"/tr-args/*.jsonl | cut -d: -f1-4 | tr '\n' ' ')
partial=$(sed -n 's/.*turn 1 broke.*partial arguments: \[\(.*\)\]$/\1/p' "$tmp"/tr-args/*.stderr)
whole=$(sed -n 's/^arguments: //p' "$tmp"/tr-args/*.stderr)
# the trace judges the real tool calls as tool_integrity reads them
tools=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e=json.loads(l)
    if e.get("ev")=="end":
        print(",".join("%s:%s:%s"%(t["name"],t["args"],t["offered"]) for t in e.get("tool_calls",[])))' \
  "$tmp"/tr-args/*.jsonl | tr '\n' ' ')
if [ "$got" = "upstream:200:cut:cut_arguments upstream:200:complete:complete " ] && [ -n "$partial" ] \
   && [ "$tools" = "send_email:cut:True send_email:valid:True " ] \
   && ! python3 -c 'import json,sys; json.loads(sys.argv[1])' "$partial" 2>/dev/null \
   && python3 -c 'import json,sys; assert json.loads(sys.argv[1])["to"]=="ops@example.com"' "$whole"; then
  ok
else
  bad "upstream{cut_arguments=true}: ends '$got', tools '$tools', partial '$partial', whole '$whole'"; show args
fi

# 5. An upstream nobody listens on: fusebox's own 502, traced as such; the
#    run fails scenario_ran (the fault never met a real answer).
scen down 'upstream {}' error
port_free=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rm -rf "$tmp/tr-down"
"$bin" exec --upstream "http://127.0.0.1:$port_free" --json "$tmp/down.json" --trace-dir "$tmp/tr-down" \
  "$tmp/down.lua" -- node examples/clients/node/openai_chat.mjs > "$tmp/down.out" 2>&1
rc=$?
got=$(ends "$tmp"/tr-down/*.jsonl | sort -u | tr '\n' ' ')
[ "$got" = "upstream:502:error_status:complete:0 " ] && [ $rc = 1 ] \
  && [ "$(verdict "$tmp/down.json" scenario_ran)" = fail ] \
  && grep -q '"kind":"upstream","message":"fusebox: the upstream http://127.0.0.1:'"$port_free"' is unreachable"' \
     "$tmp"/tr-down/*.jsonl && ok \
  || { bad "an unreachable upstream must be a traced 502: ends '$got'"; show down; }

# 6. The key: it reached the upstream (its provider refuses a request
#    without Authorization, and every answer above came from it), as a
#    header the upstream's own trace names; no file holds its value.
stop_named up
grep -q '"authorization":"\[redacted\]"' "$tmp/up.jsonl" \
  && [ "$(grep -c '"status":401' "$tmp/up.jsonl")" = 0 ] && ok \
  || { bad "the Authorization header did not reach the upstream"; grep '"ev":"arrive"' "$tmp/up.jsonl" | head -3; }
grep -q '"authorization":"\[redacted\]"' "$tmp"/tr-rl/*.jsonl && ok \
  || bad "the downstream trace should name the header, redacted"
leaks=$(grep -rl -- "$key" "$tmp" --exclude=retry.mjs 2>/dev/null)
[ -z "$leaks" ] && ok || bad "the key is written in: $leaks"
finish
