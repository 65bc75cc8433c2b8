-- examples/interop/retry_after_seconds.lua
return scenario {
  name = "interop: 429 with Retry-After: 2 (seconds)",
  doc  = [[A rate limit that asks for 2 s in delta-seconds, then a normal
           answer. The retry must come no sooner than 2 s after the 429.]],
  tags = { "interop", "ratelimit" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after = 2 },
    chat { content = "hello after the rate limit" },
  },

  expect = {
    outcome = "ok",
    retry_after_honoured = true,
    max_requests = 2,
  },
}
