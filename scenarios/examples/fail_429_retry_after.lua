-- scenarios/examples/fail_429_retry_after.lua
return scenario {
  name = "429 with Retry-After: 2 is honoured",
  doc  = [[A rate-limited provider answers 429 rate_limit_exceeded and asks
           for 2 s with "Retry-After: 2". The client waits at least that
           long, retries once, and succeeds.]],
  tags = { "example", "ratelimit", "transient" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after = 2 },
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
