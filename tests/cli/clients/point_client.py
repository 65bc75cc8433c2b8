#!/usr/bin/env python3
"""point_client.py MODE - small clients for tests/cli/point_and_startup.sh
(the point rule and the start-up time of `fusebox exec`). Standard library
only; each reads the environment fusebox exec sets (docs/exec.md), makes at
most one call and prints the answer text.

MODE:
  wait-stall      one streamed call (FUSEBOX_STREAM=1) read to its end, with
                  no idle timeout: it waits out any stall. Exit 0 with the
                  text, 1 on an error status.
  slow-start S    sleeps S seconds first (a runtime that takes long to load),
                  then one chat call, at once: exit 0 with the text, 1 on an
                  error status (a correct, instant failure).
  silent          never sends anything: sleeps until it is killed.
"""
import http.client
import json
import os
import sys
import time
import urllib.parse

MODE = sys.argv[1] if len(sys.argv) > 1 else "wait-stall"
BASE = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1").rstrip("/")
STREAM = os.environ.get("FUSEBOX_STREAM") == "1"


def call():
    """One POST to chat/completions; returns (status, text)."""
    u = urllib.parse.urlsplit(BASE + "/chat/completions")
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    body = {"model": os.environ.get("FUSEBOX_MODEL", "gpt-fusebox"),
            "messages": [{"role": "user", "content": "Say hello."}]}
    if STREAM:
        body["stream"] = True
    conn.request("POST", u.path, json.dumps(body),
                 {"Content-Type": "application/json",
                  "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "x")})
    resp = conn.getresponse()
    if resp.status != 200:
        resp.read()
        return resp.status, ""
    if not STREAM:
        doc = json.loads(resp.read())
        return 200, doc["choices"][0]["message"]["content"] or ""
    text = []
    for raw in resp:  # line by line, as long as it takes
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        delta = json.loads(data)["choices"][0].get("delta", {})
        text.append(delta.get("content") or "")
    return 200, "".join(text)


def main():
    if MODE == "silent":
        while True:
            time.sleep(3600)
    if MODE == "slow-start":
        time.sleep(float(sys.argv[2]))
    elif MODE != "wait-stall":
        print("unknown mode " + MODE, file=sys.stderr)
        return 2
    status, text = call()
    if status != 200:
        print("APIError: status %d" % status, file=sys.stderr)
        return 1
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
