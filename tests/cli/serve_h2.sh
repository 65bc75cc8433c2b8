#!/usr/bin/env bash
# Cleartext HTTP/2 with prior knowledge on the same port as HTTP/1.1
# (sim/front.c, sim/h2_bridge.c): curl --http2-prior-knowledge gets the
# scripted answer and its stream as DATA frames, the trace marks the
# attempt "proto":"h2" (and an HTTP/1.1 attempt beside it not), a stream
# dropped mid-way reaches the HTTP/2 client as a reset stream, and the
# Bedrock SDK with its DEFAULT handler (NodeHttp2Handler) makes its
# Converse call and retries the 503s over HTTP/2; the h2c Upgrade (curl
# --http2) is served the same way, its request as stream 1.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd curl python3 timeout
curl -V | grep -qw HTTP2 || missing "curl without HTTP/2 (apt-get install curl)"
cd "$src"

serve() {  # SCENARIO: starts fusebox, sets $port and $trace
  trace=$tmp/$(basename "$1" .lua).jsonl
  : > "$tmp/serve.out" # before the fork: the wait must not read the last server's port
  "$bin" serve "$1" --port 0 --trace "$trace" > "$tmp/serve.out" 2>&1 &
  spid=$!
  at_exit "kill $spid"
  wait_port_line "$tmp/serve.out" $spid || { bad "fusebox serve did not start"; cat "$tmp/serve.out"; finish; }
  port=$(sed -n 's/^port //p' "$tmp/serve.out" | head -1)
}
stop() { kill $spid; wait $spid 2>/dev/null; }
body='{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}'
sbody='{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}'

# 1. an answer over HTTP/2 and one over HTTP/1.1 on the same port
serve scenarios/transient/http_503.lua
h1=$(curl -s -m 10 -o /dev/null -w '%{http_code} %{http_version}' "http://127.0.0.1:$port/v1/chat/completions" -d "$body")
h2=$(curl -s -m 10 -o "$tmp/h2.body" -w '%{http_code} %{http_version}' --http2-prior-knowledge \
  "http://127.0.0.1:$port/v1/chat/completions" -d "$body")
h2b=$(curl -s -m 10 -w ' %{http_code} %{http_version}' --http2-prior-knowledge \
  "http://127.0.0.1:$port/v1/chat/completions" -d "$body")
[ "$h1" = "503 1.1" ] && ok || bad "HTTP/1.1 got '$h1', want '503 1.1'"
[ "$h2" = "503 2" ] && ok || bad "HTTP/2 got '$h2', want '503 2' (attempt 2 of the 503 scenario)"
case "$h2b" in *'"content":'*' 200 2') ok ;; *) bad "HTTP/2 answer: $h2b" ;; esac
stop
protos=$(python3 -c '
import json, sys
print(" ".join(e.get("proto", "h1") for e in map(json.loads, open(sys.argv[1])) if e["ev"] == "arrive"))' "$trace")
[ "$protos" = "h1 h2 h2" ] && ok || bad "arrive protos '$protos', want 'h1 h2 h2'"
attempts=$(grep -o '"attempt":[0-9]*' "$trace" | tr '\n' ' ')
[ "$attempts" = '"attempt":1 "attempt":2 "attempt":3 ' ] && ok || bad "attempts over both protocols: $attempts"

# 2. a stream as DATA frames, whole; then one dropped after two chunks:
#    the HTTP/2 client sees the stream reset (curl: exit 92), not an end
serve scenarios/stream/drop_after_chunks.lua
curl -s -m 10 --http2-prior-knowledge "http://127.0.0.1:$port/v1/chat/completions" -d "$sbody" > "$tmp/cut.out" 2>&1
rc=$?
[ $rc = 92 ] && ok || bad "a dropped stream over HTTP/2: curl exit $rc, want 92 (stream error)"
grep -q '"content":"The answer "' "$tmp/cut.out" && ok || bad "the chunks before the drop did not reach the client: $(head -c 300 "$tmp/cut.out")"
curl -s -m 10 --http2-prior-knowledge "http://127.0.0.1:$port/v1/chat/completions" -d "$sbody" > "$tmp/whole.out"
rc=$?
[ $rc = 0 ] && tail -c 200 "$tmp/whole.out" | grep -q 'data: \[DONE\]' && ok || bad "the whole stream over HTTP/2 (exit $rc): $(tail -c 200 "$tmp/whole.out")"
stop

# 2b. the HTTP/2 fault steps: curl retries a REFUSED_STREAM by itself (the
#     answer, two attempts); over HTTP/1.1 the same step is a TCP reset
serve scenarios/http2/refused_stream.lua
out=$(curl -s -m 10 --http2-prior-knowledge "http://127.0.0.1:$port/v1/chat/completions" -d "$body")
case "$out" in *'answered on a fresh stream'*) ok ;; *) bad "curl over HTTP/2 after REFUSED_STREAM: $out" ;; esac
curl -s -m 10 "http://127.0.0.1:$port/v1/chat/completions" -d "${body/hi/other}" > /dev/null 2>&1
rc=$?
[ $rc = 56 ] && ok || bad "h2_reset over HTTP/1.1: curl exit $rc, want 56 (connection reset)"
stop
# sorted: an HTTP/2 stream's end may be written after the next attempt's
steps=$(grep -o '"step":"[a-z0-9_]*","status":[0-9]*,"how":"[a-z0-9_]*"' "$trace" | sort | tr '\n' ' ')
want='"step":"chat","status":200,"how":"complete" "step":"h2_reset","status":0,"how":"h2_reset" "step":"h2_reset","status":0,"how":"reset" '
[ "$steps" = "$want" ] && ok || bad "h2_reset trace: $steps"

# 2c. h2_window{}: the HEADERS (200), then no DATA, as if the client's
#     flow-control window never opened: curl -m 2 gets the head and no
#     body and times out (exit 28); a raw HTTP/2 client (no library:
#     python3 and hand-made frames) gets its PING answered after the HEADERS
#     and no DATA before it (unheld, the DATA would come with the HEADERS);
#     over HTTP/1.1 the same step is a body stalled after its head; the
#     trace ends every one stalled, left by the client
serve scenarios/http2/window_shut.lua
curl -s -i -m 2 --http2-prior-knowledge "http://127.0.0.1:$port/v1/chat/completions" -d "$body" > "$tmp/win.out" 2>&1
rc=$?
head -1 "$tmp/win.out" | grep -q '^HTTP/2 200' && ok || bad "h2_window: no 200 head over HTTP/2: $(head -c 200 "$tmp/win.out")"
[ $rc = 28 ] && ok || bad "h2_window over HTTP/2: curl exit $rc, want 28 (timeout)"
[ -z "$(sed '1,/^\r$/d' "$tmp/win.out")" ] && ok || bad "h2_window over HTTP/2 sent a body: $(sed '1,/^\r$/d' "$tmp/win.out" | head -c 200)"
python3 - "$port" > "$tmp/ping.out" 2>&1 <<'PY'
import socket, struct, sys
def frame(typ, flags, sid, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([typ, flags]) + struct.pack(">I", sid) + payload
def lit(idx, v):  # a literal field without indexing, its name from the static table
    v = v.encode()
    return (bytes([idx]) if idx < 15 else bytes([15, idx - 15])) + bytes([len(v)]) + v
body = b'{"model":"gpt-4o","messages":[{"role":"user","content":"ping"}]}'
block = b"\x83\x86" + lit(4, "/v1/chat/completions") + lit(1, "127.0.0.1") + lit(31, "application/json")
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"") +
          frame(1, 4, 1, block) + frame(0, 1, 1, body))
buf = b""
def next_frame():
    global buf
    while len(buf) < 9 or len(buf) < 9 + int.from_bytes(buf[:3], "big"):
        got = s.recv(65536)
        if not got:
            raise SystemExit("closed")
        buf += got
    n = int.from_bytes(buf[:3], "big")
    f = (buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7fffffff, buf[9:9 + n])
    buf = buf[9 + n:]
    return f
data = 0
pinged = False
while True:
    typ, flags, sid, payload = next_frame()
    if typ == 4 and not flags & 1:
        s.sendall(frame(4, 1, 0, b""))  # SETTINGS ACK
    elif typ == 1 and sid == 1:
        print("headers")
        s.sendall(frame(6, 0, 0, b"fbx-ping"))
        pinged = True
    elif typ == 0 and sid == 1 and payload:
        data += len(payload)
    elif typ == 6 and flags & 1 and pinged:
        print("ping ack", payload.decode(), "data", data)
        break
    elif typ in (3, 7):
        print("reset or goaway", typ)
        break
PY
[ "$(cat "$tmp/ping.out")" = "headers
ping ack fbx-ping data 0" ] && ok || bad "h2_window: PING during the shut window: $(cat "$tmp/ping.out")"
curl -s -i -m 2 "http://127.0.0.1:$port/v1/chat/completions" -d "${body/hi/other}" > "$tmp/win1.out" 2>&1
rc=$?
head -1 "$tmp/win1.out" | grep -q '^HTTP/1.1 200' && [ $rc = 28 ] && [ -z "$(sed '1,/^\r$/d' "$tmp/win1.out")" ] && ok ||
  bad "h2_window over HTTP/1.1 (exit $rc, want 28, a head and no body): $(head -c 300 "$tmp/win1.out")"
for _ in $(seq 100); do [ "$(grep -c '"ev":"end"' "$trace")" -ge 3 ] && break; sleep 0.05; done
stop
ends=$(grep -o '"step":"[a-z0-9_]*","status":[0-9]*,"how":"[a-z_]*","state":"[a-z_]*"' "$trace" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')
[ "$ends" = ' 3 "step":"h2_window","status":200,"how":"client_abort","state":"stalled" ' ] && ok || bad "h2_window trace: $ends"

# 3. the Bedrock SDK with its default handler (HTTP/2)
if (cd examples/clients/node && node -e 'require.resolve("@aws-sdk/client-bedrock-runtime")' 2>/dev/null); then
  "$bin" exec --quiet --timeout 40 --json "$tmp/br.json" --trace-dir "$tmp/br" \
    scenarios/bedrock/converse_ok.lua scenarios/bedrock/unavailable_503.lua \
    -- node examples/clients/node/bedrock_chat.mjs --h2 > "$tmp/br.log" 2>&1
  got=$(python3 - "$tmp/br.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
for r in sorted(d["results"], key=lambda r: r["file"]):
    print(os.path.basename(r["file"])[:-4], r["status"], r.get("attempts_sent"), r.get("exit_code"))
PY
)
  want="converse_ok pass 1 0
unavailable_503 pass 3 0"
  [ "$got" = "$want" ] && ok || { bad "Bedrock SDK over HTTP/2: got '$got', want '$want'"; tail -20 "$tmp/br.log"; }
  grep -qx "hello from bedrock" "$tmp/br"/*-converse_ok.stdout 2>/dev/null && ok || bad "Bedrock SDK over HTTP/2 printed $(cat "$tmp/br"/*-converse_ok.stdout 2>/dev/null | head -c 200)"
  n=$(cat "$tmp/br"/*.jsonl | grep '"ev":"arrive"' | grep -c '"proto":"h2"')
  [ "$n" = 4 ] && ok || bad "Bedrock SDK: $n of its 4 attempts traced as h2"
  # 4. HTTP/2 faults played to a real HTTP/2 client and its retries judged:
  #    the AWS SDK retries REFUSED_STREAM and a GOAWAY (the stream was never
  #    processed) but not INTERNAL_ERROR (pinned: its finding, see docs/apis.md)
  #    (h2_window left out: an SDK with no read deadline would wait out the 40 s)
  "$bin" exec --quiet --timeout 40 --json "$tmp/bf.json" --trace-dir "$tmp/bf" \
    scenarios/http2/goaway.lua scenarios/http2/internal_error.lua scenarios/http2/refused_stream.lua \
    -- node examples/clients/node/bedrock_chat.mjs --h2 > "$tmp/bf.log" 2>&1
  got=$(python3 - "$tmp/bf.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
for r in sorted(d["results"], key=lambda r: r["file"]):
    print(os.path.basename(r["file"])[:-4], r["status"], r.get("attempts_sent"), r.get("exit_code"))
PY
)
  want="goaway pass 2 0
internal_error fail 1 1
refused_stream pass 2 0"
  [ "$got" = "$want" ] && ok || { bad "Bedrock SDK on HTTP/2 faults: got '$got', want '$want'"; tail -20 "$tmp/bf.log"; }
  hows=$(cat "$tmp/bf"/*.jsonl | grep -o '"how":"h2_[a-z]*"' | sort | uniq -c | tr -s ' ' | tr '\n' ' ')
  [ "$hows" = " 1 \"how\":\"h2_goaway\"  2 \"how\":\"h2_reset\" " ] && ok || bad "HTTP/2 faults in the trace: $hows"
else
  echo "note: @aws-sdk/client-bedrock-runtime not installed: its HTTP/2 check not run"
fi

# 4. 300 connections that never send a byte (more than the 256 the front
#    holds while it waits for a first byte) do not stop the accepting: a
#    silent one goes to libmicrohttpd as HTTP/1.1 after a second, with its
#    timeouts; a request behind them is answered, over either protocol.
serve scenarios/transient/http_503.lua
python3 - "$port" > "$tmp/silent.out" 2>&1 <<'PY' &
import socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(300)]
print("open", len(socks), flush=True)
time.sleep(8)
PY
hold=$!
at_exit "kill $hold"
for _ in $(seq 200); do grep -q '^open' "$tmp/silent.out" && break; sleep 0.05; done
grep -q '^open 300' "$tmp/silent.out" && ok || bad "300 silent connections: $(cat "$tmp/silent.out")"
a1=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/chat/completions" -d "$body")
a2=$(curl -s -m 5 -o /dev/null -w '%{http_code}' --http2-prior-knowledge "http://127.0.0.1:$port/v1/chat/completions" -d "$body")
[ "$a1 $a2" = "503 503" ] && ok || bad "behind 300 silent connections: HTTP/1.1 '$a1', HTTP/2 '$a2' (want 503 503)"
kill $hold 2>/dev/null
stop

# 5. the h2c Upgrade (curl --http2 on http://): 101, then the request is
#    stream 1 and its answer HTTP/2 frames, traced "proto":"h2"; its body
#    (30 kB, so it may come after the head) arrives whole: the same request
#    over HTTP/1.1 has the same key (method, path, body) and is attempt 2.
#    An h2_reset step resets stream 1. Upgrades fusebox does not take are
#    answered in HTTP/1.1: websocket, an h2c one with a chunked body or
#    one over 64 KiB.
cat > "$tmp/h2c.lua" <<'LUA'
return scenario {
  name = "h2c",
  provider = { chat { content = "scripted over h2c" } },
}
LUA
python3 -c '
import json, sys
print(json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "x" * 30000}]}), end="")' > "$tmp/big.json"
serve "$tmp/h2c.lua"
out=$(curl --http2 -sS -m 10 -w ' %{http_version}' "http://127.0.0.1:$port/v1/chat/completions" --data-binary @"$tmp/big.json")
case "$out" in *'"content":"scripted over h2c"'*' 2') ok ;; *) bad "curl --http2 (h2c Upgrade): $out" ;; esac
v=$(curl -sS -m 10 -o /dev/null -w '%{http_version}' "http://127.0.0.1:$port/v1/chat/completions" --data-binary @"$tmp/big.json")
[ "$v" = 1.1 ] && ok || bad "the same request over HTTP/1.1: version $v"
v=$(curl -sS -m 10 -o /dev/null -w '%{http_code} %{http_version}' -H 'Connection: Upgrade' -H 'Upgrade: websocket' \
  -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' -H 'Sec-WebSocket-Version: 13' "http://127.0.0.1:$port/v1/chat/completions" -d "$body")
[ "$v" = "200 1.1" ] && ok || bad "Upgrade: websocket answered '$v', want '200 1.1'"
v=$(curl --http2 -sS -m 10 -o /dev/null -w '%{http_code} %{http_version}' -H 'Transfer-Encoding: chunked' \
  "http://127.0.0.1:$port/v1/chat/completions" -d "${body/hi/chunked}")
[ "$v" = "200 1.1" ] && ok || bad "an h2c Upgrade with a chunked body answered '$v', want '200 1.1'"
python3 -c 'print("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "y" * 70000 + "\"}]}", end="")' > "$tmp/huge.json"
v=$(curl --http2 -sS -m 10 -o /dev/null -w '%{http_code} %{http_version}' \
  "http://127.0.0.1:$port/v1/chat/completions" --data-binary @"$tmp/huge.json")
[ "$v" = "200 1.1" ] && ok || bad "an h2c Upgrade with a 70 kB body answered '$v', want '200 1.1'"
stop
arr=$(python3 - "$trace" "$(wc -c < "$tmp/big.json")" <<'PY'
import json, sys
a = [e for e in map(json.loads, open(sys.argv[1])) if e["ev"] == "arrive"]
print(" ".join(e.get("proto", "h1") for e in a))
same = a[0]["key"] == a[1]["key"] and [e["attempt"] for e in a[:2]] == [1, 2]
print("whole" if same and all(e["body_bytes"] == int(sys.argv[2]) for e in a[:2]) else a[:2])
PY
)
[ "$arr" = "h2 h1 h1 h1 h1
whole" ] && ok || bad "h2c arrivals (protos; the upgraded body whole: same key as over HTTP/1.1, attempt 2): $arr"
# h2_reset on stream 1: curl sees INTERNAL_ERROR (exit 92); a raw client
# (python3, hand-made frames; its body sent after its head) gets
# RST_STREAM(REFUSED_STREAM) on stream 1
# (curl 7.88 does not retry that one after a 101: it counts header bytes)
serve scenarios/http2/internal_error.lua
out=$(curl --http2 -sS -m 10 "http://127.0.0.1:$port/v1/chat/completions" -d "$body" 2>&1)
rc=$?
case "$rc $out" in '92 '*'stream 1'*INTERNAL_ERROR*) ok ;; *) bad "h2_reset on the upgraded stream: curl exit $rc: $out" ;; esac
for _ in $(seq 100); do grep -q '"ev":"end"' "$trace" && break; sleep 0.05; done
stop
grep -q '"proto":"h2"' "$trace" && grep -q '"step":"h2_reset","status":0,"how":"h2_reset"' "$trace" && ok ||
  bad "h2_reset on the upgraded stream, trace: $(grep -o '"step":"[a-z0-9_]*","status":[0-9]*,"how":"[a-z0-9_]*"' "$trace")"
serve scenarios/http2/refused_stream.lua
python3 - "$port" "$body" > "$tmp/up.out" 2>&1 <<'PY'
import socket, struct, sys, time
def frame(typ, flags, sid, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([typ, flags]) + struct.pack(">I", sid) + payload
body = sys.argv[2].encode()
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABk\r\n"
          b"Content-Length: %d\r\n\r\n" % len(body))
time.sleep(0.2)  # not timing: the body must come after the head (the front waits for it)
s.sendall(body)
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(65536)
head, buf = buf.split(b"\r\n\r\n", 1)
print(head.split(b"\r\n")[0].decode())
s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b""))
while True:
    while len(buf) < 9 or len(buf) < 9 + int.from_bytes(buf[:3], "big"):
        got = s.recv(65536)
        if not got:
            raise SystemExit("closed")
        buf += got
    n = int.from_bytes(buf[:3], "big")
    typ, flags, sid, payload = buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7fffffff, buf[9:9 + n]
    buf = buf[9 + n:]
    if typ == 4 and not flags & 1:
        s.sendall(frame(4, 1, 0, b""))
    elif typ in (1, 3, 7):
        print({1: "headers", 3: "rst_stream", 7: "goaway"}[typ], sid, int.from_bytes(payload[:4], "big") if typ == 3 else "")
        break
PY
[ "$(cat "$tmp/up.out")" = "HTTP/1.1 101 Switching Protocols
rst_stream 1 7" ] && ok || bad "h2_reset{refused_stream} on the upgraded stream, a raw client saw: $(cat "$tmp/up.out")"
stop
finish
