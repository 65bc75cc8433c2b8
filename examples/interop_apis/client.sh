#!/bin/sh
# client.sh CLIENT - run one bundled client of the newer APIs the way the
# scenario in $FUSEBOX_SCENARIO needs it (fusebox exec sets that variable).
#
#   fusebox exec examples/interop_apis -- sh examples/interop_apis/client.sh groq-sdk
#
# CLIENT: openai-responses (openai-node responses.create), groq-sdk,
# google-genai, aisdk-responses (the AI SDK's default OpenAI provider),
# aisdk-chat (openai.chat()), aisdk-anthropic (@ai-sdk/anthropic).
# The call is picked from the scenario's file name:
#   stream_*.lua  -> --stream        tools_*.lua -> --tools
#   tools_stream_*.lua -> --tools --stream
set -eu
here=$(cd "$(dirname "$0")" && pwd)
node=$here/../clients/node

[ $# -eq 1 ] || { echo "usage: client.sh openai-responses|groq-sdk|google-genai|aisdk-responses|aisdk-chat|aisdk-anthropic" >&2; exit 2; }

scen=$(basename "${FUSEBOX_SCENARIO:-chat.lua}" .lua)
stream= tools=
case $scen in
  stream_*) stream=--stream ;;
  tools_stream_*) stream=--stream; tools=--tools ;;
  tools_*) tools=--tools ;;
esac

case $1 in
  openai-responses) exec node "$node/responses_chat.mjs" $stream $tools ;;
  groq-sdk) exec node "$node/groq_chat.mjs" $stream ;;
  google-genai) exec node "$node/genai_chat.mjs" $stream $tools ;;
  aisdk-responses) exec node "$node/aisdk_tools.mjs" responses $stream ;;
  aisdk-chat) exec node "$node/aisdk_tools.mjs" chat $stream ;;
  aisdk-anthropic) exec node "$node/aisdk_tools.mjs" anthropic $stream ;;
  *) echo "client.sh: unknown client $1" >&2; exit 2 ;;
esac
