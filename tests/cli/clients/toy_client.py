#!/usr/bin/env python3
"""toy_client.py MODE - small clients with one known flaw each, for the tests
of `fusebox exec` (tests/cli/exec_clients.sh). Standard library only. Each
reads the environment fusebox exec sets (docs/exec.md), makes one logical
call and prints the answer text.

MODE:
  good            retries transient faults (no answer, 408, 409, 429 except
                  insufficient_quota, 5xx) up to 4 attempts, waiting
                  max(backoff, Retry-After); never retries other 4xx; streams
                  when FUSEBOX_STREAM=1 (and retries a stream without its
                  end); calls FUSEBOX_EFFECT_URL with an Idempotency-Key when
                  FUSEBOX_CALL=effect. Exit 0 with the answer, 1 on failure.
  wrong-path      as good, but POSTs to $OPENAI_BASE_URL/chat/complete (a typo), a path
                  fusebox does not serve.
  no-retry        one attempt, whatever happens; exit 1 on failure.
  exit-nonzero    as good on the wire, but exits 3 whenever an attempt
                  failed, even when a retry then succeeded.
  ignore-stream   as good, but never streams, whatever FUSEBOX_STREAM says.
  honour-ra       as good, but waits out any Retry-After however long
                  (run it with a short --timeout to be killed while waiting).
"""
import http.client
import json
import os
import sys
import time
import urllib.parse

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
BASE = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1").rstrip("/")
STREAM = os.environ.get("FUSEBOX_STREAM") == "1" and MODE != "ignore-stream"
EFFECT = os.environ.get("FUSEBOX_CALL") == "effect"
TIMEOUT = float(os.environ.get("FUSEBOX_ATTEMPT_TIMEOUT") or 5)


class Transient(Exception):
    def __init__(self, msg, wait=0.0):
        super().__init__(msg)
        self.wait = wait


class Permanent(Exception):
    pass


def retry_after(resp):
    ms = resp.getheader("retry-after-ms")
    if ms:
        return float(ms) / 1000.0
    ra = resp.getheader("retry-after")
    try:
        return float(ra) if ra else 0.0
    except ValueError:
        return 0.0


def attempt(url, body, headers):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
    try:
        conn.request("POST", u.path, body=json.dumps(body), headers=headers)
        resp = conn.getresponse()
        data = resp.read().decode("utf-8", "replace")
    except (OSError, http.client.HTTPException) as e:
        raise Transient(f"{type(e).__name__}: {e}")
    finally:
        conn.close()
    if resp.status >= 400:
        quota = "insufficient_quota" in data
        if resp.status in (408, 409, 429) and not quota or resp.status >= 500:
            raise Transient(f"HTTP {resp.status}", retry_after(resp))
        raise Permanent(f"HTTP {resp.status}: {data[:2000]}")
    if EFFECT:
        return data
    if STREAM:
        text, done = "", False
        for line in data.splitlines():
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                done = True
                continue
            chunk = json.loads(payload)
            if "error" in chunk:
                raise Transient("stream error event")
            text += (chunk["choices"][0].get("delta") or {}).get("content") or ""
        if not done:
            raise Transient("stream ended without [DONE]")
        return text
    try:
        return json.loads(data)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError):
        raise Transient("malformed answer")


def main():
    headers = {"Content-Type": "application/json",
               "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "")}
    if EFFECT:
        url = os.environ["FUSEBOX_EFFECT_URL"]
        payload = os.environ.get("FUSEBOX_EFFECT_PAYLOAD")
        body = json.loads(payload) if payload else {"to": "user@example.com"}
        headers["Idempotency-Key"] = "toy-%d" % os.getpid()
    else:
        path = "/chat/complete" if MODE == "wrong-path" else "/chat/completions"
        url = BASE + path
        body = {"model": os.environ.get("FUSEBOX_MODEL", "m"), "max_tokens": 16,
                "messages": [{"role": "user", "content": "hello"}]}
        if STREAM:
            body["stream"] = True
    attempts = 1 if MODE == "no-retry" else 4
    failed_once = False
    for n in range(attempts):
        try:
            text = attempt(url, body, headers)
            print(text)
            return 3 if MODE == "exit-nonzero" and failed_once else 0
        except Permanent as e:
            print(f"toy_client: {e}", file=sys.stderr)
            return 1
        except Transient as e:
            failed_once = True
            print(f"toy_client: attempt {n + 1}: {e}", file=sys.stderr)
            if n + 1 < attempts:
                wait = max(0.2 * 2 ** n, e.wait)
                if MODE != "honour-ra":
                    wait = min(wait, 10.0)
                time.sleep(wait)
    print("toy_client: gave up", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
