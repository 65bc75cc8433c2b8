#!/bin/sh
# client.sh CLIENT - run one bundled example client the way the interop
# scenario in $FUSEBOX_SCENARIO needs it (fusebox exec sets that variable).
#
#   fusebox exec examples/interop -- sh examples/interop/client.sh openai-node
#
# CLIENT: openai-node, anthropic-sdk, python-tenacity or curl-retry (the
# names of the profiles in profiles/). The call is picked from the
# scenario's file name:
#   stream_*.lua  -> --stream
#   effect_*.lua  -> --effect
#   hang_*.lua    -> CLIENT_TIMEOUT_MS=1000 (unless already set)
#   anything else -> one plain chat call
set -eu
here=$(cd "$(dirname "$0")" && pwd)
clients=$here/../clients

[ $# -eq 1 ] || { echo "usage: client.sh openai-node|anthropic-sdk|python-tenacity|curl-retry" >&2; exit 2; }

scen=$(basename "${FUSEBOX_SCENARIO:-chat.lua}" .lua)
mode=
case $scen in
  stream_*) mode=--stream ;;
  effect_*) mode=--effect ;;
  hang_*) CLIENT_TIMEOUT_MS=${CLIENT_TIMEOUT_MS:-1000}; export CLIENT_TIMEOUT_MS ;;
esac

case $1 in
  openai-node) exec node "$clients/node/openai_chat.mjs" $mode ;;
  anthropic-sdk) exec node "$clients/node/anthropic_chat.mjs" $mode ;;
  python-tenacity) exec /usr/bin/python3 "$clients/python/wrapper_chat.py" $mode ;;
  curl-retry) exec sh "$clients/curl/chat.sh" $mode ;;
  *) echo "client.sh: unknown client $1" >&2; exit 2 ;;
esac
