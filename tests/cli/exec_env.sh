#!/usr/bin/env bash
# fusebox exec tells the command which API the scenario speaks (issue 22,
# item 6): FUSEBOX_DIALECT in docs/apis.md's names, FUSEBOX_MODEL of that
# family and FUSEBOX_PATH, the path to call (a Gemini stream's own path), for
# one scenario of each API, streamed and not; a scenario that names no API
# gets chat completions; a streamed tools turn (call = "stream_tools") is
# streamed too. Then the generic curl client
# (examples/clients/curl/any_api.sh), which reads only these variables, calls
# each scenario's API: the trace's arrivals carry that dialect, path and
# model.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd curl jq sh
cd "$src" || exit 1

# name scenario DIALECT MODEL PATH STREAM
cases="chat scenarios/transient/http_503.lua openai-chat gpt-fusebox /v1/chat/completions 0
chat-stream scenarios/stream/drop_after_chunks.lua openai-chat gpt-fusebox /v1/chat/completions 1
responses scenarios/responses/unavailable_503.lua openai-responses gpt-fusebox /v1/responses 0
responses-stream scenarios/responses/stream_drop.lua openai-responses gpt-fusebox /v1/responses 1
anthropic scenarios/transient/anthropic_529_overloaded.lua anthropic claude-fusebox /v1/messages 0
anthropic-stream scenarios/stream/anthropic_overloaded_event.lua anthropic claude-fusebox /v1/messages 1
gemini scenarios/gemini/unavailable_503.lua gemini gemini-fusebox /v1beta/models/gemini-fusebox:generateContent 0
gemini-stream scenarios/gemini/stream_drop.lua gemini gemini-fusebox /v1beta/models/gemini-fusebox:streamGenerateContent?alt=sse 1
tools-stream scenarios/tools/cut_mid_arguments.lua openai-chat gpt-fusebox /v1/chat/completions 1"

while read -r name scen dialect model path stream; do
  out="$tmp/$name.env"
  "$bin" exec --quiet --timeout 20 "$scen" -- sh -c "env | grep ^FUSEBOX_ > '$out'" > /dev/null 2>&1
  [ -s "$out" ] || { bad "$name: the command wrote no FUSEBOX_ variables"; continue; }
  got=$(grep -E '^FUSEBOX_(DIALECT|MODEL|PATH|STREAM)=' "$out" | sort | tr '\n' ' ')
  want="FUSEBOX_DIALECT=$dialect FUSEBOX_MODEL=$model FUSEBOX_PATH=$path FUSEBOX_STREAM=$stream "
  [ "$got" = "$want" ] && ok || bad "$name: got '$got', want '$want'"
  grep -q "^FUSEBOX_URL=http://127.0.0.1:[0-9]*$" "$out" && ok || bad "$name: FUSEBOX_URL: $(grep ^FUSEBOX_URL "$out")"

  # The generic client calls the API exec named: every arrival says so.
  "$bin" exec --quiet --timeout 20 --trace-dir "$tmp/$name" "$scen" \
    -- sh examples/clients/curl/any_api.sh > /dev/null 2>&1
  facts=$(jq -r 'select(.ev == "arrive") | "\(.dialect) \(.model) \(.path) \(.stream)"' \
          "$tmp/$name"/*.jsonl | sort -u)
  st=false; [ "$stream" = 1 ] && st=true
  want_facts="$dialect $model ${path%%\?*} $st"
  [ "$facts" = "$want_facts" ] && ok || bad "$name: any_api.sh arrived as '$facts', want '$want_facts'"
done <<< "$cases"

# Bedrock, Ollama and Cohere (client.dialect bedrock, ollama, cohere): the
# variables name them too (any_api.sh does not speak them; their SDK clients
# are tested in sdk_apis.sh).
own="bedrock scenarios/bedrock/converse_ok.lua bedrock-converse bedrock-fusebox /model/bedrock-fusebox/converse 0
bedrock-stream scenarios/bedrock/stream_throttled.lua bedrock-converse bedrock-fusebox /model/bedrock-fusebox/converse-stream 1
ollama scenarios/ollama/stream_no_done.lua ollama-chat ollama-fusebox /api/chat 1
cohere scenarios/cohere/unavailable_503.lua cohere cohere-fusebox /v2/chat 0"
while read -r name scen dialect model path stream; do
  out="$tmp/$name.env"
  "$bin" exec --quiet --timeout 20 "$scen" -- sh -c "env | grep ^FUSEBOX_ > '$out'" > /dev/null 2>&1
  got=$(grep -E '^FUSEBOX_(DIALECT|MODEL|PATH|STREAM)=' "$out" 2>/dev/null | sort | tr '\n' ' ')
  want="FUSEBOX_DIALECT=$dialect FUSEBOX_MODEL=$model FUSEBOX_PATH=$path FUSEBOX_STREAM=$stream "
  [ "$got" = "$want" ] && ok || bad "$name: got '$got', want '$want'"
done <<< "$own"

# Where the answer comes back, the generic client prints it in every API.
for name in chat:back\ again responses:hello gemini:hello; do
  want=${name#*:} name=${name%%:*}
  [ "$(cat "$tmp/$name"/*.stdout)" = "$want" ] && ok \
    || bad "$name: any_api.sh printed '$(cat "$tmp/$name"/*.stdout)' (stderr: $(cat "$tmp/$name"/*.stderr))"
done
finish
