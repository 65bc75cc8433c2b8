#!/usr/bin/env bash
# The main job. Until `fusebox run` exists, it serves an example scenario
# (a provider that fails with 503 twice, then answers) and shows a client --
# curl, retrying by hand -- hitting it, then prints the trace the server wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
FUSEBOX=${FUSEBOX_BIN:-build/fusebox}
SCENARIO=scenarios/examples/fail_503_then_ok.lua
mkdir -p out
TRACE=out/demo.trace.jsonl

"$FUSEBOX" check "$SCENARIO"
"$FUSEBOX" serve "$SCENARIO" --port 0 --trace "$TRACE" > out/serve.log &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '^port ' out/serve.log 2>/dev/null && break; sleep 0.05; done
port=$(awk '/^port /{print $2}' out/serve.log)
[ -n "$port" ] || { echo "fusebox serve did not start"; exit 1; }
head -3 out/serve.log

for attempt in 1 2 3; do
  code=$(curl -s -o out/demo.body -w '%{http_code}' "http://127.0.0.1:$port/v1/chat/completions" \
    -H 'Content-Type: application/json' -H 'Authorization: Bearer sk-demo' \
    -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}')
  echo "attempt $attempt: HTTP $code  $(head -c 120 out/demo.body)"
  [ "$code" = 200 ] && break
done
kill -TERM $pid; wait $pid || true
trap - EXIT
echo "== trace ($TRACE)"
cat "$TRACE"
