#!/usr/bin/env bash
# Real clients of the newer APIs judged by fusebox exec over
# examples/interop_apis/: openai-node's Responses API, groq-sdk
# (/openai/v1/chat/completions), @google/genai (Gemini), and the Vercel AI
# SDK's default OpenAI provider (/v1/responses), .chat() and
# @ai-sdk/anthropic (/messages under a /v1 base), each running a tool at the
# effect endpoint. For every client x scenario this pins what the client
# really does -- requests that reached the provider, its exit status, the
# best-practice verdicts it fails (tool_integrity among them) -- in
# tests/cli/interop_apis/<client>.txt. groq-sdk and @google/genai are also
# judged against their profiles (profiles/<client>.lua).
#   UPDATE=1 bash tests/cli/interop_apis.sh   rewrites the pinned tables.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd python3
need_node_pkg openai groq-sdk @google/genai ai @ai-sdk/openai @ai-sdk/anthropic zod
cd "$src"
clients="openai-responses groq-sdk google-genai aisdk-responses aisdk-chat aisdk-anthropic"
# Three clients at a time: the machine is shared.
run_one() {
  local c=$1 prof=
  [ -f "profiles/$c.lua" ] && prof="--profile profiles/$c.lua"
  "$bin" exec --quiet --timeout 30 $prof --json "$tmp/$c.json" --trace-dir "$tmp/$c" \
    examples/interop_apis -- sh examples/interop_apis/client.sh "$c" > "$tmp/$c.log" 2>&1
}
set -- $clients
while [ $# -gt 0 ]; do
  for k in 1 2 3; do
    [ $# -gt 0 ] || break
    run_one "$1" &
    shift
  done
  wait
done
for c in $clients; do
  if [ ! -s "$tmp/$c.json" ]; then
    bad "$c produced no report"; tail -5 "$tmp/$c.log"; continue
  fi
  python3 tests/cli/interop_summary.py "$tmp/$c.json" > "$tmp/$c.txt"
  pinned=tests/cli/interop_apis/$c.txt
  if [ "${UPDATE:-0}" = 1 ]; then
    mkdir -p tests/cli/interop_apis
    cp "$tmp/$c.txt" "$pinned"; echo "updated $pinned"; ok
  elif diff -u "$pinned" "$tmp/$c.txt"; then
    echo "ok: $c behaves as pinned ($(wc -l < "$pinned") scenarios)"; ok
  else
    bad "$c behaved differently from $pinned (diff above)"
  fi
done
# Every request of every client reached a scenario (no 404: the paths the
# SDKs use are served), in the API each one speaks.
for c in $clients; do
  if grep -h '"ev":"arrive"' "$tmp/$c"/*.jsonl 2>/dev/null | grep -q '"dialect":null'; then
    bad "$c sent a request no API serves"
  else
    apis=$(grep -ho '"dialect":"[a-z-]*"' "$tmp/$c"/*.jsonl | sort -u | sed 's/"dialect"://; s/"//g' | tr '\n' ' ')
    echo "ok: $c reached the scenarios ($apis)"; ok
  fi
done
finish
