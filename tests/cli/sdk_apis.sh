#!/usr/bin/env bash
# The real SDKs of the APIs fusebox learnt in issue 26 (npm `ollama`,
# `cohere-ai`, `@aws-sdk/client-bedrock-runtime`), each through `fusebox
# exec` of its scenarios/ folder: the default call gets the scripted answer
# (stdout), a streamed one too; on a 503 each makes the attempts its source
# says (ollama: 1, none retried; cohere-ai: 3, about 1 s and 2 s apart;
# Bedrock: 3, under 50 ms and 100 ms apart) and its profile holds; a stream
# with no end marker or an in-stream error (Bedrock: an exception message
# in the binary event stream) fails the call, never returns the partial
# text. Skipped (77) when node_modules lacks a package.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_node_pkg ollama cohere-ai @aws-sdk/client-bedrock-runtime @smithy/node-http-handler
N=$src/examples/clients/node

# run NAME CLIENT-ARGS... -- exec's options and scenarios: results in $tmp/NAME.json,
# outputs under $tmp/NAME/
run() {
  local name=$1; shift
  local client=()
  while [ "$1" != "--" ]; do client+=("$1"); shift; done
  shift
  "$bin" exec --quiet --timeout 40 --json "$tmp/$name.json" --trace-dir "$tmp/$name" "$@" \
    -- node "${client[@]}" > "$tmp/$name.log" 2>&1
}
# facts JSON: one line per scenario, "file-stem status attempts exit dialects"
facts() {
  python3 - "$1" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
for r in sorted(d["results"], key=lambda r: r["file"]):
    ds = sorted({a.get("dialect") or "-" for a in r.get("attempts", [])})
    print(os.path.basename(r["file"])[:-4], r["status"], r.get("attempts_sent"), r.get("exit_code"),
          ",".join(ds) or "-")
PY
}
check() {  # NAME WANT MSG
  if diff <(facts "$tmp/$1.json") <(printf '%s\n' "$2") > "$tmp/$1.diff"; then ok
  else bad "$3"; cat "$tmp/$1.diff" "$tmp/$1.log"; fi
}
stdout_has() {  # NAME SCENARIO-STEM TEXT
  if grep -qx "$3" "$tmp/$1"/*-"$2".stdout 2>/dev/null; then ok
  else bad "$1: $2 printed $(cat "$tmp/$1"/*-"$2".stdout 2>/dev/null | head -c 200)"; fi
}
verdict() {  # NAME SCENARIO-STEM VERDICT STATUS
  local got
  got=$(python3 - "$tmp/$1.json" "$2" "$3" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    if os.path.basename(r["file"])[:-4] == sys.argv[2]:
        print(next((v["status"] for v in r["verdicts"] if v["name"] == sys.argv[3]), "absent"))
PY
)
  if [ "$got" = "$4" ]; then ok; else bad "$1: $2: verdict $3 is $got, want $4"; fi
}

# ---- Ollama: /api/chat, then /api/generate, whole and streamed
run ollama "$N/ollama_chat.mjs" -- --profile "$src/profiles/ollama-js.lua" "$src/scenarios/ollama"
check ollama "chat_ok pass 1 0 ollama-chat
stream_no_done fail 1 1 ollama-chat
unavailable_503 fail 1 1 ollama-chat" "ollama: one attempt each, the answer at once, no retry"
stdout_has ollama chat_ok "hello from ollama"
verdict ollama unavailable_503 profile pass
grep -q "ResponseError (status 503): server busy" "$tmp"/ollama/*-unavailable_503.stderr && ok ||
  bad "ollama: the 503's {\"error\"} is not the ResponseError's message"
grep -q "Did not receive done or success response in stream" "$tmp"/ollama/*-stream_no_done.stderr &&
  ok || bad "ollama: a stream without done:true did not fail the call"

run ollama_stream "$N/ollama_chat.mjs" --stream -- "$src/scenarios/ollama/chat_ok.lua"
check ollama_stream "chat_ok pass 1 0 ollama-chat" "ollama: streamed chat"
stdout_has ollama_stream chat_ok "hello from ollama"
run ollama_generate "$N/ollama_chat.mjs" --generate -- "$src/scenarios/ollama/chat_ok.lua"
check ollama_generate "chat_ok pass 1 0 ollama-generate" "ollama: /api/generate (the package sends stream:false)"
stdout_has ollama_generate chat_ok "hello from ollama"

# ---- Cohere: /v2/chat, retried as requestWithRetries says
run cohere "$N/cohere_chat.mjs" -- --profile "$src/profiles/cohere-ai.lua" "$src/scenarios/cohere"
check cohere "chat_ok pass 1 0 cohere
stream_error fail 1 1 cohere
unavailable_503 pass 3 0 cohere" "cohere-ai: 3 attempts on the 503s, the stream error not retried"
stdout_has cohere chat_ok "hello from cohere"
stdout_has cohere unavailable_503 "hello from cohere"
verdict cohere unavailable_503 profile pass
grep -q "stream ended with ERROR: internal error while generating" "$tmp"/cohere/*-stream_error.stderr &&
  ok || bad "cohere: message-end ERROR did not fail the call"
# the waits: about 1 s, then about 2 s (0.9-1.1, 1.8-2.2 with jitter)
gaps=$(python3 - "$tmp/cohere.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
r = next(r for r in d["results"] if os.path.basename(r["file"]) == "unavailable_503.lua")
a = sorted(r["attempts"], key=lambda a: a["arrive_ms"])
print(" ".join("%.0f" % (a[i + 1]["arrive_ms"] - a[i]["end_ms"]) for i in range(len(a) - 1)))
PY
)
read -r g1 g2 <<< "$gaps"
if [ "${g1:-0}" -ge 850 ] && [ "${g1:-0}" -le 1500 ] && [ "${g2:-0}" -ge 1750 ] && [ "${g2:-0}" -le 2800 ]; then ok
else bad "cohere: backoff gaps $gaps ms, want about 1000 and 2000"; fi

run cohere_stream "$N/cohere_chat.mjs" --stream -- "$src/scenarios/cohere/chat_ok.lua"
check cohere_stream "chat_ok pass 1 0 cohere" "cohere-ai: chatStream"
stdout_has cohere_stream chat_ok "hello from cohere"

# ---- Bedrock: Converse and ConverseStream over HTTP/1.1
run bedrock "$N/bedrock_chat.mjs" -- --profile "$src/profiles/aws-bedrock-runtime.lua" \
  "$src/scenarios/bedrock"
check bedrock "converse_ok pass 1 0 bedrock-converse
stream_throttled fail 1 1 bedrock-converse
unavailable_503 pass 3 0 bedrock-converse" "Bedrock: 3 attempts on the 503s, the in-stream exception not retried"
stdout_has bedrock converse_ok "hello from bedrock"
stdout_has bedrock unavailable_503 "hello from bedrock"
verdict bedrock unavailable_503 profile pass
grep -q "ThrottlingException: Too many tokens" "$tmp"/bedrock/*-stream_throttled.stderr &&
  ok || bad "Bedrock: the throttlingException message did not fail the stream"
run bedrock_stream "$N/bedrock_chat.mjs" --stream -- "$src/scenarios/bedrock/converse_ok.lua"
check bedrock_stream "converse_ok pass 1 0 bedrock-converse" "Bedrock: ConverseStream"
stdout_has bedrock_stream converse_ok "hello from bedrock"
# InvokeModel and InvokeModelWithResponseStream (Anthropic's body and events)
run bedrock_invoke "$N/bedrock_chat.mjs" --invoke -- "$src/scenarios/bedrock/converse_ok.lua" \
  "$src/scenarios/bedrock/unavailable_503.lua"
check bedrock_invoke "converse_ok pass 1 0 bedrock-invoke
unavailable_503 pass 3 0 bedrock-invoke" "Bedrock: InvokeModel"
stdout_has bedrock_invoke converse_ok "hello from bedrock"
run bedrock_invoke_stream "$N/bedrock_chat.mjs" --invoke --stream -- \
  "$src/scenarios/bedrock/converse_ok.lua" "$src/scenarios/bedrock/stream_throttled.lua"
check bedrock_invoke_stream "converse_ok pass 1 0 bedrock-invoke
stream_throttled fail 1 1 bedrock-invoke" "Bedrock: InvokeModelWithResponseStream"
stdout_has bedrock_invoke_stream converse_ok "hello from bedrock"
# a 429 is a throttling error: retried after under 1 s, then under 2 s
run bedrock_429 "$N/bedrock_chat.mjs" -- --profile "$src/profiles/aws-bedrock-runtime.lua" \
  "$src/scenarios/transient/http_429_rate_limit.lua"
verdict bedrock_429 http_429_rate_limit profile pass

finish
