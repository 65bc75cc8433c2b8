#!/usr/bin/env bash
# Bedrock's ConverseStream as fusebox writes it (sim/eventstream.c,
# sim/dialect_bedrock.c), decoded by an independent decoder: the AWS SDK's
# own @smithy/eventstream-codec (tests/cli/clients/es_decode.mjs), which
# checks every prelude and message CRC and length. A clean stream with text
# (quotes, UTF-8) and a tool call, one broken by a throttlingException, one
# cut by drop_after, one without its end (no_end). Skipped (77) when
# node_modules lacks the codec.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd curl
need_node_pkg @smithy/eventstream-codec
export NODE_CLIENTS_DIR=$src/examples/clients/node
cat > "$tmp/s.lua" <<'LUA'
local steps = {
  stream { chunks = { "Hi \"x\"", " caf\195\169" },
           tool_calls = { { name = "get_weather", arguments = { city = "Paris" } } } },
  stream { content = "one two three", error_after = 1,
           error = { status = 429, message = "Too many tokens." } },
  stream { content = "one two three", drop_after = 2 },
  stream { content = "one two three", no_end = true },
  stream { content = "one two three" },
}
return scenario { name = "t", provider = function(req) return steps[req.n] end }
LUA
"$bin" serve "$tmp/s.lua" --port 0 > "$tmp/serve.out" 2>&1 &
pid=$!
at_exit "kill $pid"
port=
for _ in $(seq 50); do
  port=$(grep -o '127.0.0.1:[0-9]*' "$tmp/serve.out" | head -1 | cut -d: -f2)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { bad "no port from fusebox serve"; cat "$tmp/serve.out"; finish; }
for i in 1 2 3 4; do
  curl -s -o "$tmp/$i.bin" -D "$tmp/$i.h" "http://127.0.0.1:$port/model/m1/converse-stream" \
    -d '{"messages":[{"role":"user","content":[{"text":"hi"}]}]}'
done
decode() { node "$src/tests/cli/clients/es_decode.mjs" "$@" 2> "$tmp/decode.err"; }

if grep -qi '^content-type: application/vnd.amazon.eventstream' "$tmp/1.h"; then ok
else bad "content type: $(grep -i content-type "$tmp/1.h")"; fi
want='messageStart event {"role":"assistant"}
contentBlockDelta event {"contentBlockIndex":0,"delta":{"text":"Hi \"x\""}}
contentBlockDelta event {"contentBlockIndex":0,"delta":{"text":" café"}}
contentBlockStop event {"contentBlockIndex":0}
contentBlockStart event {"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"call_1","name":"get_weather"}}}
contentBlockDelta event {"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"city\":"}}}
contentBlockDelta event {"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"Paris\"}"}}}
contentBlockStop event {"contentBlockIndex":1}
messageStop event {"stopReason":"tool_use"}'
if diff <(decode "$tmp/1.bin" | sed '$d') <(printf '%s\n' "$want") > "$tmp/d1"; then ok
else bad "clean stream decoded"; cat "$tmp/d1" "$tmp/decode.err"; fi
if decode "$tmp/1.bin" | tail -1 | grep -q '^metadata event {"usage":{"inputTokens":'; then ok
else bad "metadata last"; fi
want='messageStart event {"role":"assistant"}
contentBlockDelta event {"contentBlockIndex":0,"delta":{"text":"one"}}
throttlingException exception {"message":"Too many tokens."}'
if diff <(decode "$tmp/2.bin") <(printf '%s\n' "$want") > "$tmp/d2"; then ok
else bad "stream with a throttlingException"; cat "$tmp/d2" "$tmp/decode.err"; fi
# drop_after = 2: two whole deltas, then nothing (curl sees the cut)
if [ "$(decode "$tmp/3.bin" | grep -c contentBlockDelta)" = 2 ] &&
   ! decode "$tmp/3.bin" | grep -q messageStop; then ok
else bad "drop_after 2"; decode "$tmp/3.bin"; fi
if [ "$(decode "$tmp/4.bin" | grep -c contentBlockDelta)" = 3 ] &&
   ! decode "$tmp/4.bin" | grep -q 'messageStop\|metadata'; then ok
else bad "no_end"; decode "$tmp/4.bin"; fi
# InvokeModelWithResponseStream: chunk messages whose bytes are Anthropic's events
curl -s -o "$tmp/5.bin" "http://127.0.0.1:$port/model/m1/invoke-with-response-stream" \
  -d '{"anthropic_version":"bedrock-2023-05-31","max_tokens":9,"messages":[]}'
got=$(decode "$tmp/5.bin" | python3 -c '
import base64, json, sys
for line in sys.stdin:
    t, kind, payload = line.rstrip("\n").split(" ", 2)
    ev = json.loads(base64.b64decode(json.loads(payload)["bytes"]))
    print(t, kind, ev["type"], ev.get("delta", {}).get("text", ""))
')
want='chunk event message_start 
chunk event content_block_start 
chunk event ping 
chunk event content_block_delta one
chunk event content_block_delta  two
chunk event content_block_delta  three
chunk event content_block_stop 
chunk event message_delta 
chunk event message_stop '
if [ "$got" = "$want" ]; then ok; else bad "invoke stream decoded: $got"; fi
# the decoder is no rubber stamp: one flipped payload byte fails its CRC
python3 - "$tmp/1.bin" "$tmp/bad.bin" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[20] ^= 1
open(sys.argv[2], "wb").write(b)
PY
if decode "$tmp/bad.bin" > /dev/null; then bad "a corrupted message decoded"; else ok; fi
finish
