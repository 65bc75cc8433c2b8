#!/usr/bin/env python3
"""A client with one planted bug, for tests/cli/hunt_two_step.sh: it honours
Retry-After (seconds and retry-after-ms) and backs off on 5xx and dropped
connections, except that a 429 right after a 503 is retried at once."""
import json, os, sys, time, urllib.error, urllib.request

url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
body = json.dumps({"model": "gpt-4o-mini", "max_tokens": 64,
                   "messages": [{"role": "user", "content": "Question 1"}]}).encode()
last = None
for attempt in range(4):
    req = urllib.request.Request(url, body, {"Content-Type": "application/json",
                                             "Authorization": "Bearer sk-test"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            print(json.load(r)["choices"][0]["message"]["content"])
            sys.exit(0)
    except urllib.error.HTTPError as e:
        status, headers = e.code, e.headers
    except (urllib.error.URLError, OSError):
        status, headers = 0, {}
    if 400 <= status < 500 and status not in (408, 409, 429):
        sys.exit(1)
    wait = 0.2 * 2 ** attempt
    if status == 429:
        if headers.get("retry-after-ms"):
            wait = float(headers["retry-after-ms"]) / 1000
        elif headers.get("retry-after"):
            wait = float(headers["retry-after"])
        if last == 503:
            wait = 0  # the planted bug
    last = status
    time.sleep(wait)
sys.exit(1)
