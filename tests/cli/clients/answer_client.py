#!/usr/bin/env python3
"""answer_client.py API MODE - small clients for the `answer` verdict
(tests/cli/answer_verdict.sh): each makes one logical call the way MODE says
and prints the answer text it accepted. Standard library only; reads what
`fusebox exec` sets (docs/exec.md).

API: chat (OpenAI chat completions), anthropic (messages), responses (OpenAI
Responses), gemini (generateContent / streamGenerateContent). The call is a
stream when FUSEBOX_STREAM=1.

MODE:
  lenient     one attempt; a stream's text is kept whatever the stream says
              (an in-band error event is skipped, a missing end is not
              noticed); exit 0 with that text. No retry.
  strict      up to 4 attempts: a status >= 400, no answer, a body that is
              not the API's JSON, a stream with an error event or without
              its end are failures, retried after max(0.2 s x 2^n,
              Retry-After); exit 0 with the answer of the attempt that
              succeeded, 1 when all failed.
  canned      one attempt, whatever happens; prints a canned answer, exit 0.
  first-cut   as strict, but prints the text the FIRST attempt had sent
              before it failed (a kept partial answer), exit 0.
"""
import http.client
import json
import os
import sys
import time
import urllib.parse

API = sys.argv[1] if len(sys.argv) > 1 else "chat"
MODE = sys.argv[2] if len(sys.argv) > 2 else "strict"
STREAM = os.environ.get("FUSEBOX_STREAM") == "1"
TIMEOUT = float(os.environ.get("FUSEBOX_ATTEMPT_TIMEOUT") or 2)
MODEL = os.environ.get("FUSEBOX_MODEL", "m")
CANNED = "Here is your answer."


class Failed(Exception):
    def __init__(self, msg, partial="", wait=0.0):
        super().__init__(msg)
        self.partial = partial
        self.wait = wait


def request():
    """The URL, body and headers of one call of API."""
    h = {"Content-Type": "application/json"}
    if API == "anthropic":
        url = os.environ["ANTHROPIC_BASE_URL"].rstrip("/") + "/v1/messages"
        body = {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
        h["x-api-key"] = os.environ.get("ANTHROPIC_API_KEY", "")
        h["anthropic-version"] = "2023-06-01"
    elif API == "responses":
        url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/responses"
        body = {"model": MODEL, "input": "hi"}
        h["Authorization"] = "Bearer " + os.environ.get("OPENAI_API_KEY", "")
    elif API == "gemini":
        verb = "streamGenerateContent?alt=sse" if STREAM else "generateContent"
        url = (os.environ["GOOGLE_GEMINI_BASE_URL"].rstrip("/") +
               "/v1beta/models/gemini-fusebox:" + verb)
        body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        h["x-goog-api-key"] = os.environ.get("GEMINI_API_KEY", "")
    else:
        url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
        body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
        h["Authorization"] = "Bearer " + os.environ.get("OPENAI_API_KEY", "")
    if STREAM and API != "gemini":
        body["stream"] = True
    return url, body, h


def retry_after(resp):
    ms = resp.getheader("retry-after-ms")
    ra = resp.getheader("retry-after")
    try:
        return float(ms) / 1000.0 if ms else float(ra) if ra else 0.0
    except ValueError:
        return 0.0


def whole_text(doc):
    """The answer text of a non-streamed answer of API."""
    if API == "anthropic":
        return "".join(b.get("text", "") for b in doc["content"] if b.get("type") == "text")
    if API == "responses":
        return "".join(p.get("text", "") for it in doc["output"] if it.get("type") == "message"
                       for p in it["content"] if p.get("type") == "output_text")
    if API == "gemini":
        return "".join(p.get("text", "") for p in doc["candidates"][0]["content"]["parts"])
    return doc["choices"][0]["message"]["content"]


def stream_events(resp):
    """(event name, data object) for each SSE event, read as it arrives."""
    name = None
    while True:
        line = resp.readline()
        if not line:
            return
        line = line.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data = line[5:].strip()
            yield name, (data if data == "[DONE]" else json.loads(data))
            name = None


def read_stream(resp):
    """The streamed text and whether the stream ended well; lenient keeps the
    text whatever happens, strict raises Failed with the partial text."""
    text, done, error = "", False, None
    for name, ev in stream_events(resp):
        if ev == "[DONE]":
            done = True
        elif API == "anthropic":
            if ev.get("type") == "error":
                error = ev["error"].get("type")
            elif ev.get("type") == "content_block_delta":
                text += ev["delta"].get("text", "")
            elif ev.get("type") == "message_stop":
                done = True
        elif API == "responses":
            t = ev.get("type") or name
            if t in ("error", "response.failed"):
                error = error or t
            elif t == "response.output_text.delta":
                text += ev.get("delta", "")
            elif t == "response.completed":
                done = True
        elif "error" in ev:
            error = str(ev["error"].get("status") or ev["error"].get("code"))
        elif API == "gemini":
            cand = ev["candidates"][0]
            text += "".join(p.get("text", "") for p in cand.get("content", {}).get("parts", []))
            done = done or bool(cand.get("finishReason"))
        else:
            ch = ev["choices"][0] if ev.get("choices") else {}
            text += (ch.get("delta") or {}).get("content") or ""
    if MODE == "lenient":
        return text
    if error:
        raise Failed("stream error event: %s" % error, text)
    if not done:
        raise Failed("stream ended without its end", text)
    return text


def attempt():
    url, body, headers = request()
    u = urllib.parse.urlsplit(url)
    path = u.path + ("?" + u.query if u.query else "")
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=TIMEOUT)
    partial = ""
    try:
        conn.request("POST", path, body=json.dumps(body), headers=headers)
        resp = conn.getresponse()
        if resp.status >= 400:
            resp.read()
            raise Failed("HTTP %d" % resp.status, wait=retry_after(resp))
        if STREAM:
            return read_stream(resp)
        data = resp.read().decode("utf-8", "replace")
        try:
            return whole_text(json.loads(data))
        except (ValueError, KeyError, IndexError, TypeError):
            raise Failed("not the API's JSON: %r" % data[:60])
    except Failed as e:
        partial = e.partial
        raise
    except (OSError, http.client.HTTPException, ValueError) as e:
        raise Failed("%s: %s" % (type(e).__name__, e), partial)
    finally:
        conn.close()


def main():
    if MODE in ("lenient", "canned"):
        try:
            text = attempt()
        except Failed as e:
            print("answer_client: %s (ignored)" % e, file=sys.stderr)
            text = CANNED
        print(CANNED if MODE == "canned" else text)
        return 0
    first = None
    for n in range(4):
        try:
            text = attempt()
            print(first if MODE == "first-cut" and first is not None else text)
            return 0
        except Failed as e:
            if first is None:
                first = e.partial
            print("answer_client: attempt %d: %s" % (n + 1, e), file=sys.stderr)
            time.sleep(min(max(0.2 * 2 ** n, e.wait), 5.0))
    print("answer_client: gave up", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
