-- scenarios/ratelimit/retry_after_unparsable.lua
return scenario {
  name = "An unparsable Retry-After falls back to backoff",
  doc  = [[The 429 carries "Retry-After: soon", which is neither seconds nor an
           HTTP-date. A client that parses it as 0 retries at once; one that
           throws on it loses the call. A good client ignores the bad value,
           waits its own backoff (at least half a second here) and retries.]],
  tags = { "ratelimit", "retry-after", "bad-header" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after = "soon" },
    chat { content = "hello" },
  },

  client = { deadline = 8, attempts = 3,
             backoff = { base = 1, cap = 4, jitter = "equal" } },

  expect = {
    point = { "backoff" },
    attempts = 2,
    backoff = { min_gap = 0.3 },
    outcome = "ok",
    within_deadline = true,
  },
}
