-- scenarios/ratelimit/retry_after_seconds.lua
return scenario {
  name = "429 with Retry-After: 2 (seconds) is honoured",
  doc  = [[A rate-limited provider answers 429 and asks for 2 s with
           "Retry-After: 2". The provider knows its own limiter better than any
           backoff formula: a good client waits at least that long (its own
           backoff is only a floor under it), retries once and succeeds. A
           client that ignores the header comes back early and is refused
           again, and the refusal counts against the limit too.]],
  tags = { "ratelimit", "retry-after", "transient" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", type = "requests",
           message = "Rate limit reached for requests per min (RPM).", retry_after = 2 },
    chat { content = "hello" },
  },

  client = { deadline = 8, attempts = 3 },

  expect = {
    point = { "retry_after_honoured" },
    attempts = 2,
    retry_after_honoured = true,
    outcome = "ok",
    within_deadline = true,
  },
}
