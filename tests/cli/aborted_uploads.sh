#!/usr/bin/env bash
# Aborted uploads release their sockets at once (issue 29 item 1): under
# `ulimit -n 64`, 300 clients that send headers announcing 1,000 bytes of
# body, 10 of them (or none, or a pause first) and close must not leave the
# server unable to answer: libmicrohttpd's epoll mode missed the end of a
# stream that came with the last bytes, and each such socket sat in
# CLOSE-WAIT for the 300 s connection timeout. A complete request from a
# client that half-closes after it is still answered. Loopback only.
. "$(dirname "$0")/lib.sh"
pid=
at_exit '[ -n "$pid" ] && kill "$pid"'
need_fusebox
need_cmd curl awk timeout
need_python socket

cat > "$tmp/s.lua" <<'LUA'
return scenario { name = "aborted uploads", provider = function(req) return chat { content = "hi" } end }
LUA
cat > "$tmp/abort.py" <<'PY'
import socket, sys, time
port, n, how = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
head = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    if how == "part":
        s.sendall(head + b"0123456789")
    elif how == "headers":
        s.sendall(head)
    else:  # the body bytes and the close in a later packet than the headers
        s.sendall(head)
        time.sleep(0.002)
        s.sendall(b"0123456789")
    s.close()
PY
cat > "$tmp/halfclose.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
          b"Connection: close\r\n\r\n{}")
s.shutdown(socket.SHUT_WR)
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
print(data.split(b"\r\n", 1)[0].decode())
PY

(ulimit -n 64 && exec "$bin" serve "$tmp/s.lua" --port 0 --trace "$tmp/t.jsonl" > "$tmp/out" 2> "$tmp/err") &
pid=$!
wait_port_line "$tmp/out"
port=$(awk '/^port /{print $2}' "$tmp/out")
[ -n "$port" ] && ok || { bad "serve printed no port"; cat "$tmp/err"; exit 1; }
url="http://127.0.0.1:$port/v1/chat/completions"

for how in part headers later; do
  n=300; [ $how = later ] && n=100
  timeout 60 python3 "$tmp/abort.py" "$port" $n $how || bad "$how: the aborting client failed"
  # every aborted socket is closed within a few seconds: a normal request is answered
  code=000
  for _ in 1 2 3 4 5; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$url" -d '{}')
    [ "$code" = 200 ] && break
  done
  [ "$code" = 200 ] && ok || bad "$how: after $n aborted uploads under ulimit -n 64 a request got $code within 5 s"
  held=$(ss -tan 2>/dev/null | awk -v p=":$port" '$1 == "CLOSE-WAIT" && index($4, p) {n++} END {print n + 0}')
  [ "$held" -lt 10 ] && ok || bad "$how: $held sockets still in CLOSE-WAIT"
done

[ "$(timeout 10 python3 "$tmp/halfclose.py" "$port")" = "HTTP/1.1 200 OK" ] && ok \
  || bad "a complete request from a half-closing client was not answered"

finish
