#!/bin/sh
# learn_all.sh - fusebox learn on each of the eight bundled clients, its
# time measured, then the learned profile compared with the hand-written
# one (diff-policy) and used with `exec --profile` on the probes' kind of
# scenario (examples/interop), where its own client must pass its
# `profile` verdict. Results under $OUT (default /tmp/fusebox-learn-all):
# NAME.lua, NAME.diff, NAME.exec.json; one summary line per client.
#
#   sh examples/interop/learn_all.sh            WARP=2 JOBS=2 OUT=DIR
#   ONLY=langchain-js sh examples/interop/learn_all.sh   (one client)
#   LIB=scenarios sh examples/interop/learn_all.sh       (judged over the
#                                                          standard library)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${FUSEBOX_BIN:-$root/build/fusebox}
OUT=${OUT:-/tmp/fusebox-learn-all}
WARP=${WARP:-2}
JOBS=${JOBS:-2}
mkdir -p "$OUT"
# NAME API PROFILE COMMAND...
one() {
  name=$1 api=$2 profile=$3
  shift 3
  [ -z "${ONLY:-}" ] || [ "$ONLY" = "$name" ] || return 0
  t0=$(date +%s.%N)
  "$bin" learn --warp "$WARP" -j "$JOBS" --api "$api" --name "$name" -q -o "$OUT/$name.lua" -- "$@" \
    2> "$OUT/$name.err"
  rc=$?
  t1=$(date +%s.%N)
  took=$(echo "$t1 - $t0" | bc)
  [ $rc = 0 ] || { echo "$name: learn failed ($rc): $(tail -1 "$OUT/$name.err")"; return; }
  "$bin" diff-policy --tolerance 0.35 "$root/profiles/$profile.lua" "$OUT/$name.lua" > "$OUT/$name.diff" 2>&1
  nd=$(grep -c '→' "$OUT/$name.diff")
  "$bin" exec --warp "$WARP" --timeout 60 --profile "$OUT/$name.lua" --json "$OUT/$name.exec.json" -q \
    "$root/${LIB:-examples/interop}" -- "$@" > /dev/null 2>&1
  pf=$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["results"]
v = [x["status"] for s in r for x in s["verdicts"] if x["name"] == "profile"]
print("%d pass, %d fail, %d n/a" % (v.count("pass"), v.count("fail"), v.count("n/a")))' "$OUT/$name.exec.json" 2>/dev/null)
  fails=$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["results"]
print("; ".join("%s: %s" % (s.get("file", "?"), x["evidence"][:160]) for s in r for x in s["verdicts"]
                if x["name"] == "profile" and x["status"] == "fail"))' "$OUT/$name.exec.json" 2>/dev/null)
  echo "$name: learned in ${took%.*} s; $nd facts differ from profiles/$profile.lua; its own profile verdict over ${LIB:-examples/interop}: $pf${fails:+ ($fails)}"
}
n=$root/examples/clients/node
one openai-node openai openai-node node "$n/openai_chat.mjs"
one anthropic-sdk anthropic anthropic-sdk node "$n/anthropic_chat.mjs"
one ai-sdk openai vercel-ai-sdk node "$n/ai_sdk_chat.mjs"
one langchain-js openai langchain-openai node "$n/langchain_chat.mjs"
one groq-sdk openai groq-sdk node "$n/groq_chat.mjs"
one google-genai gemini google-genai node "$n/genai_chat.mjs"
one python-tenacity openai python-tenacity /usr/bin/python3 "$root/examples/clients/python/wrapper_chat.py"
one curl-retry openai curl-retry sh "$root/examples/clients/curl/chat.sh"
