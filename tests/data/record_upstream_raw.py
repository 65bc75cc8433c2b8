#!/usr/bin/env python3
"""A raw HTTP upstream for tests/cli/record_hostile.sh.

  record_upstream_raw.py HITS_FILE   prints "port N" and serves until killed

Every request line it receives is appended to HITS_FILE, so a test can tell
whether the recorder forwarded anything. Answers by path:
  /v1/chat/completions  200 JSON; a response header and the body carry keys
  /weird                HTTP/1.1 700 with a body (a status no scenario plays)
  /garbage              bytes that are not HTTP, then close
  anything else         404 JSON
"""
import socket
import sys
import threading

SECRET_HDR = "X-Debug-Token: Bearer sk-RESPHDRSECRET0123456789\r\nX-Echo: AIzaRESPECHOSECRET0123456789abcdef\r\n"
CHAT = (b'{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,'
        b'"message":{"role":"assistant","content":"your key sk-proj-RESPBODYSECRET01 is bad"},'
        b'"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}')


def handle(conn, hits):
    conn.settimeout(5)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        with open(hits, "a") as f:
            f.write(lines[0] + "\n")
        length = 0
        for l in lines[1:]:
            if l.lower().startswith("content-length:"):
                length = int(l.split(":", 1)[1])
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
        parts = lines[0].split(" ")
        path = parts[1] if len(parts) > 1 else ""
        if path.startswith("/v1/chat/completions"):
            conn.sendall(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + SECRET_HDR +
                          "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(CHAT)).encode() + CHAT)
        elif path.startswith("/weird"):
            conn.sendall(b"HTTP/1.1 700 Weird\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
                         b"Connection: close\r\n\r\nweird")
        elif path.startswith("/garbage"):
            conn.sendall(b"\x00\x01garbage, not HTTP at all\r\n\r\n")
        else:
            body = b'{"error":{"message":"not found","type":"invalid_request_error"}}'
            conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    hits = sys.argv[1]
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    print("port %d" % s.getsockname()[1], flush=True)
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c, hits), daemon=True).start()


if __name__ == "__main__":
    main()
