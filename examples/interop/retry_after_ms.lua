-- examples/interop/retry_after_ms.lua
return scenario {
  name = "interop: 429 with retry-after-ms: 1500 only",
  doc  = [[OpenAI's non-standard retry-after-ms header asks for 1.5 s; there
           is no Retry-After. Clients that read only Retry-After use their own
           backoff instead.]],
  tags = { "interop", "ratelimit" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after_ms = 1500 },
    chat { content = "hello after the rate limit" },
  },

  expect = {
    outcome = "ok",
    retry_after_honoured = true,
    max_requests = 2,
  },
}
