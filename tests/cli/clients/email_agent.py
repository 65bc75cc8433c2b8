#!/usr/bin/env python3
"""email_agent.py - the agent of the 8 pm peak incident (docs/import.md):
one chat call offering the tool send_email, whose calls it runs at
$FUSEBOX_URL/v1/effects/send_email. Python standard library only.

  email_agent.py --double   the incident's client: after a 429 it ignores
                            Retry-After and retries three times at once,
                            and runs the tool call of every answer that
                            carries one, unkeyed (the answer it was waiting
                            for looked lost, so it took the next): the
                            customer gets two emails
  email_agent.py --fixed    honours Retry-After, one attempt at a time (at
                            most 4), and runs each call of the one answer it
                            accepts once, keyed by the call id
  --dump FILE               also writes each answer received, in order: the
                            status and the body as JSON with sorted keys,
                            `id` of the completion and `created` masked

Prints the tool calls it ran; exit 0 when a call ran, 1 otherwise.
"""
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request

BASE = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1").rstrip("/")
ROOT = os.environ.get("FUSEBOX_URL", BASE[: -len("/v1")] if BASE.endswith("/v1") else BASE)
BODY = json.dumps({
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "Confirm order 1042 to the customer by email"}],
    "tools": [{"type": "function", "function": {"name": "send_email", "parameters": {
        "type": "object", "properties": {"to": {"type": "string"}, "subject": {"type": "string"}}}}}],
}).encode()


DUMP = []
LOCK = threading.Lock()


def canon(status, raw):
    """One line for an answer: its status and its body, ids and times masked."""
    try:
        body = json.loads(raw)
    except ValueError:
        return "%d %r" % (status, raw)
    if isinstance(body, dict):
        for k in ("id", "created"):
            if k in body:
                body[k] = "X"
    return "%d %s" % (status, json.dumps(body, sort_keys=True, separators=(",", ":")))


def keep(status, raw):
    with LOCK:
        DUMP.append(canon(status, raw))


def chat():
    """One attempt: (status, retry_after seconds or None, parsed body or None)."""
    req = urllib.request.Request(BASE + "/chat/completions", data=BODY, method="POST", headers={
        "content-type": "application/json", "authorization": "Bearer sk-placeholder"})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            raw = r.read()
            keep(r.status, raw)
            return r.status, None, json.loads(raw)
    except urllib.error.HTTPError as e:
        ra = e.headers.get("retry-after")
        keep(e.code, e.read())
        return e.code, float(ra) if ra and ra.replace(".", "", 1).isdigit() else None, None
    except (OSError, ValueError):
        return 0, None, None


def calls_of(body):
    msg = ((body or {}).get("choices") or [{}])[0].get("message") or {}
    return msg.get("tool_calls") or []


def run_tool(call, keyed):
    fn = call.get("function", {})
    headers = {"content-type": "application/json"}
    if keyed:
        headers["idempotency-key"] = call.get("id", "")
    req = urllib.request.Request(ROOT + "/v1/effects/" + fn.get("name", ""), method="POST",
                                 data=(fn.get("arguments") or "{}").encode(), headers=headers)
    with urllib.request.urlopen(req, timeout=20) as r:
        r.read()
    print("ran %s %s %s" % (fn.get("name"), call.get("id"), fn.get("arguments")), flush=True)


def double():
    ran = []
    status, _, body = chat()
    if status == 429:
        answers = []
        def one():
            answers.append(chat())
        threads = [threading.Thread(target=one) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        answers = [(status, None, body)]
    for status, _, body in answers:
        for c in calls_of(body) if status == 200 else []:
            run_tool(c, keyed=False)
            ran.append(c)
    return ran


def fixed():
    for _ in range(4):
        status, ra, body = chat()
        if status == 200:
            done = set()
            for c in calls_of(body):
                if c.get("id") not in done:
                    run_tool(c, keyed=True)
                    done.add(c.get("id"))
            return list(done)
        if status not in (0, 429, 500, 502, 503, 529):
            return []
        time.sleep(ra if ra is not None else 1.0)
    return []


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    dump = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--dump" else None
    if mode not in ("--double", "--fixed"):
        sys.stderr.write("usage: email_agent.py --double | --fixed [--dump FILE]\n")
        sys.exit(2)
    ran = double() if mode == "--double" else fixed()
    if dump:
        with open(dump, "w") as f:
            f.write("".join(line + "\n" for line in DUMP))
    if not ran:
        sys.stderr.write("error: no tool call ran\n")
    sys.exit(0 if ran else 1)
