"""chat_client.py - a small LLM client on httpx, the kind of code a team tests
with the fusebox pytest plugin (tests/integrations/pytest/).

ChatClient retries what is transient (connection errors, 408, 409, 429,
5xx and 529) with exponential backoff and jitter, honours Retry-After
(seconds, an HTTP date, or retry-after-ms), gives up at once on any other
4xx, and speaks the OpenAI or the Anthropic dialect. The base URL comes from
OPENAI_BASE_URL / ANTHROPIC_BASE_URL, as the vendors' SDKs read it.

``honour_retry_after=False`` makes it the badly behaved client the suite is
meant to catch: it retries on its own short fixed schedule whatever the
provider asked for.
"""
import email.utils
import os
import random
import time

import httpx

TRANSIENT = {408, 409, 429, 500, 502, 503, 504, 529}


class ChatError(Exception):
    """The call failed; status is the last HTTP status (None: no answer)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def retry_after_seconds(headers, now=None):
    """The wait a response asks for, in seconds, or None."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if ra is None:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class ChatClient:
    def __init__(self, dialect="openai", attempts=3, backoff=0.5, cap=8.0, timeout=10.0,
                 honour_retry_after=True, max_retry_after=30.0, sleep=time.sleep, rand=random.random):
        self.dialect = dialect
        self.attempts = attempts
        self.backoff = backoff
        self.cap = cap
        self.honour_retry_after = honour_retry_after
        self.max_retry_after = max_retry_after
        self.sleep = sleep
        self.rand = rand
        if dialect == "anthropic":
            base = os.environ.get("ANTHROPIC_BASE_URL", "https://api.anthropic.com").rstrip("/")
            self.url = base + "/v1/messages"
            key = os.environ.get("ANTHROPIC_API_KEY")
            headers = {"anthropic-version": "2023-06-01"}
            if key:
                headers["x-api-key"] = key
        else:
            base = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
            self.url = base + "/chat/completions"
            key = os.environ.get("OPENAI_API_KEY")
            headers = {"Authorization": "Bearer " + key} if key else {}
        self.http = httpx.Client(timeout=timeout, headers=headers, trust_env=False)

    def close(self):
        self.http.close()

    def _wait(self, n, response):
        """Seconds to wait before attempt n+1."""
        if not self.honour_retry_after:
            return 0.2  # the bad client: a short fixed pause, whatever was asked
        own = min(self.cap, self.backoff * (2 ** (n - 1))) * (0.9 + 0.2 * self.rand())
        asked = retry_after_seconds(response.headers) if response is not None else None
        if asked is not None:
            if asked > self.max_retry_after:
                raise ChatError("the provider asks for %.0f s, more than we wait" % asked, response.status_code)
            return max(own, asked)
        return own

    def chat(self, prompt, model=None):
        """One chat call; returns the answer text or raises ChatError."""
        if self.dialect == "anthropic":
            body = {"model": model or "claude-fusebox", "max_tokens": 64,
                    "messages": [{"role": "user", "content": prompt}]}
        else:
            body = {"model": model or "gpt-fusebox", "messages": [{"role": "user", "content": prompt}]}
        last = None
        for n in range(1, self.attempts + 1):
            response = None
            try:
                response = self.http.post(self.url, json=body)
            except httpx.TransportError as e:
                last = ChatError("%s: %s" % (type(e).__name__, e))
            else:
                if response.status_code == 200:
                    try:
                        data = response.json()
                        if self.dialect == "anthropic":
                            return "".join(c.get("text", "") for c in data["content"])
                        return data["choices"][0]["message"]["content"]
                    except (ValueError, KeyError, IndexError, TypeError) as e:
                        last = ChatError("malformed answer: %s" % e, 200)
                elif response.status_code in TRANSIENT:
                    last = ChatError("HTTP %d" % response.status_code, response.status_code)
                else:
                    raise ChatError("HTTP %d: %s" % (response.status_code, response.text[:200]), response.status_code)
            if n < self.attempts:
                self.sleep(self._wait(n, response))
        raise last
