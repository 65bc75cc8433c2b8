#!/usr/bin/env bash
# The guarded client speaks each provider's own API: on scenarios/bedrock,
# scenarios/ollama and scenarios/cohere (whose client tables name their
# dialect) it passes every scenario, and the trace shows its requests went
# to Bedrock's /model/{id}/converse(-stream), Ollama's /api/chat and
# Cohere's /v2/chat, arriving as those dialects, streamed where the
# scenario streams. A guard that fell back to OpenAI (/v1/chat/completions)
# would pass the scenarios but fail here.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd jq
cd "$src" || exit 1

"$bin" run --client guard --quiet --json "$tmp/run.json" --trace-dir "$tmp/traces" \
  scenarios/bedrock scenarios/ollama scenarios/cohere > "$tmp/run.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || bad "fusebox run exited $rc: $(head -c 600 "$tmp/run.out")"
n=$(jq '[.. | objects | select(has("verdicts"))] | length' "$tmp/run.json" 2>/dev/null)
[ "${n:-0}" -ge 9 ] && ok || bad "the report holds $n scenarios, want 9"

# scenario-file-stem  dialect  path (a regex)  stream
cases='bedrock_converse_ok bedrock-converse ^/primary/model/[^/]+/converse$ false
bedrock_unavailable_503 bedrock-converse ^/primary/model/[^/]+/converse$ false
bedrock_stream_throttled bedrock-converse ^/primary/model/[^/]+/converse-stream$ true
ollama_chat_ok ollama-chat ^/primary/api/chat$ false
ollama_unavailable_503 ollama-chat ^/primary/api/chat$ false
ollama_stream_no_done ollama-chat ^/primary/api/chat$ true
cohere_chat_ok cohere ^/primary/v2/chat$ false
cohere_unavailable_503 cohere ^/primary/v2/chat$ false
cohere_stream_error cohere ^/primary/v2/chat$ true'
while read -r stem dialect path stream; do
  t=$(ls "$tmp/traces"/*"$stem".jsonl 2>/dev/null | head -1)
  [ -n "$t" ] || { bad "$stem: no trace"; continue; }
  got=$(jq -r 'select(.ev == "arrive") | "\(.dialect) \(.path) \(.stream)"' "$t" | sort -u)
  [ -n "$got" ] || { bad "$stem: no arrivals in the trace"; continue; }
  while read -r d p s; do
    [ "$d" = "$dialect" ] && [[ "$p" =~ $path ]] && [ "$s" = "$stream" ] && ok \
      || bad "$stem: arrived as '$d $p $s', want '$dialect $path $stream'"
  done <<< "$got"
  # the guard got the scenario's own answer back, in that API
  ans=$(jq -r 'select(.ev == "client") | .text' "$t" | tail -1)
  [[ "$ans" == "hello from ${stem%%_*}" ]] && ok || bad "$stem: the guard answered '$ans'"
done <<< "$cases"

# No request of these runs went to an OpenAI path.
openai=$(jq -r 'select(.ev == "arrive") | .path' "$tmp/traces"/*.jsonl | grep -c '/chat/completions')
[ "$openai" = 0 ] && ok || bad "$openai requests went to /chat/completions"
finish
