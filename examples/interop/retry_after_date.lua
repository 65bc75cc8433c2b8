-- examples/interop/retry_after_date.lua
return scenario {
  name = "interop: 429 with Retry-After as an HTTP date",
  doc  = [[A rate limit whose Retry-After is an HTTP-date at least 2 s ahead
           (the server rounds up to the next whole second), then a normal
           answer. A client that only parses delta-seconds falls back to its
           own backoff and comes back too early.]],
  tags = { "interop", "ratelimit" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after_date = 2 },
    chat { content = "hello after the rate limit" },
  },

  expect = {
    outcome = "ok",
    retry_after_honoured = true,
    max_requests = 2,
  },
}
