#!/bin/sh
# client.sh CLIENT - run one bundled example client the way the interop
# scenario in $FUSEBOX_SCENARIO needs it (fusebox exec sets that variable).
#
#   fusebox exec examples/interop -- sh examples/interop/client.sh openai-node
#
# CLIENT: openai-node, anthropic-sdk, python-tenacity, curl-retry,
# ai-sdk or langchain-js (the names of the profiles in profiles/). Each
# reads the call the scenario needs from the environment fusebox exec sets
# (FUSEBOX_STREAM, FUSEBOX_CALL, FUSEBOX_EFFECT_URL, FUSEBOX_ATTEMPT_TIMEOUT;
# docs/exec.md): nothing is guessed from the file name.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
clients=$here/../clients

[ $# -eq 1 ] || { echo "usage: client.sh openai-node|anthropic-sdk|python-tenacity|curl-retry|ai-sdk|langchain-js" >&2; exit 2; }

case $1 in
  openai-node) exec node "$clients/node/openai_chat.mjs" ;;
  anthropic-sdk) exec node "$clients/node/anthropic_chat.mjs" ;;
  python-tenacity) exec /usr/bin/python3 "$clients/python/wrapper_chat.py" ;;
  curl-retry) exec sh "$clients/curl/chat.sh" ;;
  ai-sdk) exec node "$clients/node/ai_sdk_chat.mjs" ;;
  langchain-js) exec node "$clients/node/langchain_chat.mjs" ;;
  *) echo "client.sh: unknown client $1" >&2; exit 2 ;;
esac
