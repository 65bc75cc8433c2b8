#!/bin/sh
# any_api.sh - a generic shell client: one curl call in whichever API the
# scenario names, with the same curl options as chat.sh (-sS --fail --retry 3).
#
#   sh any_api.sh            the call fusebox exec describes
#   sh any_api.sh --stream   the same, streamed
#   sh any_api.sh --effect   POST $FUSEBOX_EFFECT_URL
#
# It picks the API from what `fusebox exec` sets (docs/exec.md), never from
# the scenario's name: FUSEBOX_DIALECT (openai-chat, openai-responses,
# anthropic, gemini), FUSEBOX_PATH (the path to call on FUSEBOX_URL; a
# streamed call's own path for Gemini), FUSEBOX_MODEL, FUSEBOX_STREAM and
# FUSEBOX_CALL. Keys: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY (any
# placeholder). CLIENT_TIMEOUT_MS or FUSEBOX_ATTEMPT_TIMEOUT: curl --max-time
# per attempt. Needs curl and jq. Exit 0 on success; otherwise curl's or
# jq's exit status, with the error on stderr; 2 on usage errors.
set -u

usage() { echo "usage: any_api.sh [--stream | --effect]" >&2; exit 2; }
root=${FUSEBOX_URL:-}
[ -n "$root" ] || { echo "any_api.sh: FUSEBOX_URL is not set (run it under fusebox exec)" >&2; exit 2; }
root=${root%/}
dialect=${FUSEBOX_DIALECT:-openai-chat}
model=${FUSEBOX_MODEL:-gpt-fusebox}
prompt=${PROMPT:-Say hello.}

mode=chat
[ "${FUSEBOX_STREAM:-0}" = 1 ] && mode=stream
[ "${FUSEBOX_CALL:-chat}" = effect ] && mode=effect
case ${1:-} in
  "") ;;
  --stream) mode=stream ;;
  --effect) mode=effect ;;
  *) usage ;;
esac
[ $# -le 1 ] || usage

# The path: exec's, else the API's own (a streamed Gemini call has its own).
path=${FUSEBOX_PATH:-}
case $dialect in
  openai-chat) path=${path:-/v1/chat/completions} ;;
  openai-responses) path=${path:-/v1/responses} ;;
  anthropic) path=${path:-/v1/messages} ;;
  gemini)
    if [ -z "$path" ]; then
      path="/v1beta/models/$model:generateContent"
      [ $mode = stream ] && path="/v1beta/models/$model:streamGenerateContent?alt=sse"
    elif [ $mode = stream ]; then
      case $path in *:generateContent) path="${path%:generateContent}:streamGenerateContent?alt=sse" ;; esac
    fi ;;
  *) echo "any_api.sh: FUSEBOX_DIALECT '$dialect' is not an API this client speaks" >&2; exit 2 ;;
esac

set -- -sS --fail --retry 3 -H "Content-Type: application/json"
case $dialect in
  anthropic) set -- "$@" -H "x-api-key: ${ANTHROPIC_API_KEY:-}" -H "anthropic-version: 2023-06-01" ;;
  gemini) set -- "$@" -H "x-goog-api-key: ${GEMINI_API_KEY:-}" ;;
  *) set -- "$@" -H "Authorization: Bearer ${OPENAI_API_KEY:-}" ;;
esac
if [ -z "${CLIENT_TIMEOUT_MS:-}" ] && [ -n "${FUSEBOX_ATTEMPT_TIMEOUT:-}" ]; then
  CLIENT_TIMEOUT_MS=$(awk -v s="$FUSEBOX_ATTEMPT_TIMEOUT" 'BEGIN { printf "%d", s * 1000 }')
fi
if [ -n "${CLIENT_TIMEOUT_MS:-}" ]; then
  set -- "$@" --max-time "$(awk -v ms="$CLIENT_TIMEOUT_MS" 'BEGIN { printf "%.3f", ms / 1000 }')"
fi

if [ $mode = effect ]; then
  payload=${FUSEBOX_EFFECT_PAYLOAD:-}
  [ -n "$payload" ] || payload='{"to":"user@example.com","subject":"hello"}'
  out=$(curl "$@" -d "$payload" "${FUSEBOX_EFFECT_URL:-$root/v1/effects/send_email}") || exit $?
  printf '%s\n' "$out"
  exit 0
fi

s=false
[ $mode = stream ] && s=true
case $dialect in
  openai-chat)
    body='{model: $m, messages: [{role: "user", content: $p}], max_tokens: 64}'
    text='.choices[0].message.content'
    delta='.choices[0].delta.content // empty' ;;
  openai-responses)
    body='{model: $m, input: $p, max_output_tokens: 64}'
    text='[.output[]? | select(.type == "message") | .content[]? | select(.type == "output_text") | .text] | join("")'
    delta='select(.type == "response.output_text.delta") | .delta' ;;
  anthropic)
    body='{model: $m, max_tokens: 64, messages: [{role: "user", content: $p}]}'
    text='[.content[]? | select(.type == "text") | .text] | join("")'
    delta='select(.type == "content_block_delta") | .delta.text // empty' ;;
  gemini)
    body='{contents: [{role: "user", parts: [{text: $p}]}]}'
    text='[.candidates[0].content.parts[]? | .text // empty] | join("")'
    delta=$text ;;
esac
# Gemini streams by path; the others by "stream": true in the body.
[ "$dialect" = gemini ] || body="$body + (if \$s then {stream: true} else {} end)"
data=$(jq -cn --arg m "$model" --arg p "$prompt" --argjson s "$s" "$body") || exit $?

if [ $mode = stream ]; then
  out=$(curl "$@" -N -d "$data" "$root$path") || exit $?
  printf '%s\n' "$out" | sed -n 's/^data: //p' | grep -v '^\[DONE\]$' | jq -rj "$delta" || exit $?
  echo
else
  out=$(curl "$@" -d "$data" "$root$path") || exit $?
  printf '%s\n' "$out" | jq -er "$text" || exit $?
fi
