#!/usr/bin/python3
"""wrapper_chat.py - the typical "retry 3 times" Python wrapper around httpx.

Written the way the common tenacity + httpx decorator is written (see
shared/background/02): one @retry around the HTTP POST, stop after 3 attempts,
exponential wait (1 s, 2 s, ... capped at 10 s), retrying on *any* exception,
with raise_for_status() inside the retried function so every HTTP error
(401 and a quota 429 included) is retried, and Retry-After never read.

    /usr/bin/python3 wrapper_chat.py            one chat completion (OpenAI)
    /usr/bin/python3 wrapper_chat.py --stream   one streamed chat completion
    /usr/bin/python3 wrapper_chat.py --effect   POST $FUSEBOX_URL/v1/effects/send_email

Environment: OPENAI_BASE_URL (default https://api.openai.com/v1),
OPENAI_API_KEY, FUSEBOX_URL (for --effect), CLIENT_TIMEOUT_MS (per-attempt
timeout; default 30 s, as the wrapper's request_timeout).
Exit 0 on success, 1 on failure (error class and message on stderr),
2 on usage errors. Runs on Debian's python3-httpx and python3-tenacity, so
use /usr/bin/python3 rather than any other python3 on PATH.
"""
import json
import os
import sys

import httpx
from tenacity import retry, stop_after_attempt, wait_exponential

BASE_URL = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
API_KEY = os.environ.get("OPENAI_API_KEY", "")
MODEL = os.environ.get("OPENAI_MODEL") or os.environ.get("FUSEBOX_MODEL") or "gpt-4o-mini"
PROMPT = os.environ.get("PROMPT", "Say hello.")


def timeout_seconds():
    raw = os.environ.get("CLIENT_TIMEOUT_MS", "")
    if not raw and os.environ.get("FUSEBOX_ATTEMPT_TIMEOUT"):
        raw = str(round(float(os.environ["FUSEBOX_ATTEMPT_TIMEOUT"]) * 1000))
    if not raw:
        return 30.0
    try:
        ms = int(raw)
    except ValueError:
        ms = 0
    if ms <= 0:
        print(f"CLIENT_TIMEOUT_MS must be a positive integer, got {raw}", file=sys.stderr)
        sys.exit(2)
    return ms / 1000.0


client = httpx.Client(
    timeout=timeout_seconds(),
    headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"},
)


@retry(stop=stop_after_attempt(3), wait=wait_exponential(multiplier=1, min=1, max=10),
       reraise=True)
def post_json(url, payload):
    """One POST; any exception (network, timeout, HTTP status) is retried."""
    response = client.post(url, json=payload)
    response.raise_for_status()
    return response


@retry(stop=stop_after_attempt(3), wait=wait_exponential(multiplier=1, min=1, max=10),
       reraise=True)
def post_stream(url, payload):
    """One streamed POST, read to the end; the text is rebuilt per attempt."""
    parts = []
    with client.stream("POST", url, json=payload) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            chunk = json.loads(data)
            if "error" in chunk:
                raise RuntimeError(f"stream error: {chunk['error']}")
            for choice in chunk.get("choices", []):
                parts.append((choice.get("delta") or {}).get("content") or "")
    return "".join(parts)


def main(argv):
    # Without an argument, the call fusebox exec says the scenario needs.
    mode = "chat"
    if not argv and os.environ.get("FUSEBOX_STREAM") == "1":
        mode = "stream"
    elif not argv and os.environ.get("FUSEBOX_CALL") == "effect":
        mode = "effect"
    for arg in argv:
        if arg in ("--stream", "--effect") and mode == "chat":
            mode = arg[2:]
        else:
            print(f"usage: wrapper_chat.py [--stream | --effect] (bad argument {arg})",
                  file=sys.stderr)
            return 2
    messages = [{"role": "user", "content": PROMPT}]
    try:
        if mode == "effect":
            root = os.environ.get("FUSEBOX_URL") or BASE_URL.removesuffix("/v1")
            url = os.environ.get("FUSEBOX_EFFECT_URL") or root.rstrip("/") + "/v1/effects/send_email"
            payload = os.environ.get("FUSEBOX_EFFECT_PAYLOAD")
            response = post_json(url, json.loads(payload) if payload else
                                 {"to": "user@example.com", "subject": "hello"})
            print(json.dumps(response.json()))
        elif mode == "stream":
            print(post_stream(BASE_URL + "/chat/completions",
                              {"model": MODEL, "messages": messages, "max_tokens": 64,
                               "stream": True}))
        else:
            response = post_json(BASE_URL + "/chat/completions",
                                 {"model": MODEL, "messages": messages, "max_tokens": 64})
            print(response.json()["choices"][0]["message"]["content"].strip())
    except Exception as exc:  # the caller sees the last attempt's error
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
