-- scenarios/transient/http_429_rate_limit.lua
return scenario {
  name = "429 rate limit without Retry-After: exponential backoff",
  doc  = [[The provider answers 429 rate_limit_exceeded twice and says nothing
           about when to come back (no Retry-After). A rate limit clears with
           time, so it is transient, but every retry also counts against the
           limit: a good client backs off exponentially with jitter (each wait
           longer than the last) instead of hammering at a fixed interval, and
           the third attempt gets through.]],
  tags = { "transient", "ratelimit", "backoff" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", type = "requests",
           message = "Rate limit reached for requests per min (RPM)." },
    fail { status = 429, code = "rate_limit_exceeded", type = "requests",
           message = "Rate limit reached for requests per min (RPM)." },
    chat { content = "hello" },
  },

  client = { deadline = 10, attempts = 3,
             backoff = { base = 2, cap = 8, jitter = 0.1 } },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 3,
    outcome = "ok",
    backoff = { growth = true },
    within_deadline = true,
  },
}
