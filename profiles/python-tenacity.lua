-- profiles/python-tenacity.lua
return profile {
  name    = "python-tenacity",
  version = "httpx 0.23.3 + tenacity 8.2.1 (Debian 12)",
  doc     = [[The typical "retry 3 times" wrapper: tenacity
              @retry(stop=stop_after_attempt(3),
              wait=wait_exponential(multiplier=1, min=1, max=10)) around an
              httpx POST with raise_for_status() inside, retrying on any
              exception: examples/clients/python/wrapper_chat.py. Every error
              status is retried, 401 and quota included; Retry-After is never
              read; a broken stream is read again from the start (the text is
              rebuilt per attempt, so never spliced). A 200 whose JSON does not
              parse is not retried (the parse is outside the retried function).
              Checked on the wire (examples/interop/FINDINGS.md).]],
  dialect = "openai",
  example = "sh examples/interop/client.sh python-tenacity",

  max_attempts = 3,
  backoff = { base = 1, factor = 2, cap = 10, jitter = "none" },
  retries = { ">=300", "connection", "timeout", "body", "stream_error" },
  x_should_retry = false,
  retry_after = { honoured = false },
  timeout = 30,
  timeout_covers = "idle",   -- httpx: connect, read, write and pool, each 30 s
  deadline = false,
  streams_retried = true,
  idempotency_key = false,
}
