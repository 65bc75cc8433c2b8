#!/usr/bin/env python3
"""A client whose retry policy is set by the POLICY environment variable
(JSON), for tests/cli/learn_configs.sh: fusebox learn must infer back what
it was told. Keys: attempts, base, factor, jitter ("none" or "subtract:F"),
retries (statuses and "connection", "body", "not_json", "missing_fields";
"shape" is both), quota (retry an
insufficient_quota 429), forms (Retry-After forms read: "ms", "seconds",
"date", in that order), cap (longest Retry-After honoured, null = none),
over_cap / invalid / past ("backoff", "stop", "immediate"), idem ("none",
"per_call", "per_attempt"), ra_required (a 429 without a Retry-After in a
form it reads is not retried)."""
import email.utils, json, os, random, sys, time, urllib.error, urllib.request, uuid

P = json.loads(os.environ["POLICY"])
url = os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions"
body = json.dumps({"model": "gpt-4o-mini", "max_tokens": 64,
                   "messages": [{"role": "user", "content": "Question 1"}]}).encode()


def backoff(n):
    w = P["base"] * P["factor"] ** n
    j = P.get("jitter", "none")
    if j.startswith("subtract:"):
        w *= 1 - float(j.split(":")[1]) * random.random()
    return w


def retry_after(h):
    """(seconds, why): why is None when a form was read, else 'invalid' or 'past'."""
    for form in P.get("forms", []):
        if form == "ms" and h.get("retry-after-ms"):
            return float(h["retry-after-ms"]) / 1000, None
        v = h.get("retry-after")
        if not v:
            continue
        if form == "seconds":
            try:
                s = float(v)
                return (s, None) if s > 0 else (0, "past")
            except ValueError:
                if "date" not in P["forms"]:
                    return 0, "invalid"
        if form == "date":
            try:
                s = email.utils.parsedate_to_datetime(v).timestamp() - time.time()
                return (s, None) if s > 0 else (0, "past")
            except (TypeError, ValueError):
                return 0, "invalid"
    return None, None


key = str(uuid.uuid4())
for n in range(P["attempts"]):
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-test"}
    if P.get("idem") == "per_call":
        headers["Idempotency-Key"] = key
    elif P.get("idem") == "per_attempt":
        headers["Idempotency-Key"] = str(uuid.uuid4())
    kind, hd = None, {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=10) as r:
            raw = r.read()
            try:
                print(json.loads(raw)["choices"][0]["message"]["content"])
                sys.exit(0)
            except ValueError:
                kind = "not_json"
            except (KeyError, IndexError, TypeError):
                kind = "missing_fields"
    except urllib.error.HTTPError as e:
        kind, hd = e.code, e.headers
        if e.code == 429 and not P.get("quota") and b"insufficient_quota" in e.read():
            sys.exit(1)
    except (urllib.error.URLError, ConnectionError) as e:
        kind = "connection"
    except Exception:  # a body that broke off (http.client.IncompleteRead)
        kind = "body"
    shape = kind in ("not_json", "missing_fields") and "shape" in P["retries"]
    if (kind not in P["retries"] and not shape) or n + 1 == P["attempts"]:
        sys.exit(1)
    wait = backoff(n)
    if kind == 429 and P.get("forms"):
        s, why = retry_after(hd)
        if s is None and P.get("ra_required"):
            sys.exit(1)
        if why or (s is not None and P.get("cap") is not None and s > P["cap"]):
            rule = P.get(why or "over_cap", "backoff")
            if rule == "stop":
                sys.exit(1)
            wait = 0 if rule == "immediate" else wait
        elif s is not None:
            wait = s
    time.sleep(wait)
sys.exit(1)
