-- scenarios/ratelimit/retry_after_negative.lua
return scenario {
  name = "A negative Retry-After is ignored, not obeyed",
  doc  = [[A buggy gateway sends "Retry-After: -5". Taken literally that means
           "retry five seconds ago": a client that sleeps max(0, value)
           retries instantly, one that feeds it to sleep() may crash. A good
           client rejects the value as bad, falls back to its own backoff (at
           least half a second here) and retries.]],
  tags = { "ratelimit", "retry-after", "bad-header" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after = "-5" },
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
