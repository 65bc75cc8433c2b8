#!/bin/sh
# chat.sh - the typical shell-script LLM call: curl with --retry 3.
#
#   sh chat.sh            one chat completion (OpenAI wire format)
#   sh chat.sh --stream   one streamed chat completion
#   sh chat.sh --effect   POST $FUSEBOX_URL/v1/effects/send_email
#
# curl options, as a typical script has them: -sS --fail --retry 3, and no
# --retry-all-errors (most scripts predate it or leave it out: it would also
# retry a 401 and replay a POST whose answer was lost). So curl retries only
# what it calls transient: a timeout, HTTP 408, 429, 500, 502, 503, 504; it
# waits 1 s, 2 s, 4 s... or what Retry-After says. Set
# CURL_RETRY_ALL_ERRORS=1 to add --retry-all-errors and compare.
#
# Environment: OPENAI_BASE_URL, OPENAI_API_KEY, FUSEBOX_URL (for --effect),
# CLIENT_TIMEOUT_MS (curl --max-time per attempt; curl has no timeout by
# default, and neither does this script without it). Needs curl and jq.
# Exit 0 on success; otherwise curl's or jq's exit status, with the error on
# stderr; 2 on usage errors.
set -u

base=${OPENAI_BASE_URL:-https://api.openai.com/v1}
base=${base%/}
model=${OPENAI_MODEL:-${FUSEBOX_MODEL:-gpt-4o-mini}}
prompt=${PROMPT:-Say hello.}

# Without an argument, the call fusebox exec says the scenario needs.
mode=chat
[ "${FUSEBOX_STREAM:-0}" = 1 ] && mode=stream
[ "${FUSEBOX_CALL:-chat}" = effect ] && mode=effect
case ${1:-} in
  "") ;;
  --stream) mode=stream ;;
  --effect) mode=effect ;;
  *) echo "usage: chat.sh [--stream | --effect]" >&2; exit 2 ;;
esac
[ $# -le 1 ] || { echo "usage: chat.sh [--stream | --effect]" >&2; exit 2; }

set -- -sS --fail --retry 3 -H "Authorization: Bearer ${OPENAI_API_KEY:-}" \
       -H "Content-Type: application/json"
if [ -z "${CLIENT_TIMEOUT_MS:-}" ] && [ -n "${FUSEBOX_ATTEMPT_TIMEOUT:-}" ]; then
  CLIENT_TIMEOUT_MS=$(awk -v s="$FUSEBOX_ATTEMPT_TIMEOUT" 'BEGIN { printf "%d", s * 1000 }')
fi
if [ -n "${CLIENT_TIMEOUT_MS:-}" ]; then
  set -- "$@" --max-time "$(awk -v ms="$CLIENT_TIMEOUT_MS" 'BEGIN { printf "%.3f", ms / 1000 }')"
fi
if [ "${CURL_RETRY_ALL_ERRORS:-0}" = 1 ]; then
  set -- "$@" --retry-all-errors
fi

body() {  # $1 = "true" to stream
  jq -cn --arg m "$model" --arg p "$prompt" --argjson s "$1" \
    '{model: $m, messages: [{role: "user", content: $p}], max_tokens: 64} + (if $s then {stream: true} else {} end)'
}

case $mode in
  chat)
    out=$(curl "$@" -d "$(body false)" "$base/chat/completions") || exit $?
    printf '%s\n' "$out" | jq -er '.choices[0].message.content' || exit $?
    ;;
  stream)
    out=$(curl "$@" -N -d "$(body true)" "$base/chat/completions") || exit $?
    printf '%s\n' "$out" | sed -n 's/^data: //p' | grep -v '^\[DONE\]$' |
      jq -rj '.choices[0].delta.content // empty' || exit $?
    echo
    ;;
  effect)
    root=${FUSEBOX_URL:-${base%/v1}}
    payload=${FUSEBOX_EFFECT_PAYLOAD:-}
    [ -n "$payload" ] || payload='{"to":"user@example.com","subject":"hello"}'
    out=$(curl "$@" -d "$payload" \
          "${FUSEBOX_EFFECT_URL:-${root%/}/v1/effects/send_email}") || exit $?
    printf '%s\n' "$out"
    ;;
esac
