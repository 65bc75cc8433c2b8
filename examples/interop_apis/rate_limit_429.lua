-- examples/interop_apis/rate_limit_429.lua
return scenario {
  name = "interop APIs: 429 asking for 2 s, then answered",
  doc  = [[A 429 asking for 2 s (Retry-After; Gemini: RetryInfo retryDelay "2s"), then an answer.]],
  tags = { "interop", "apis" },

  provider = {
    fail { status = 429, retry_after = 2 },
    chat { content = "hello after the rate limit" },
  },

  expect = {
    retry_after_honoured = true,
    max_requests = 2,
  },
}
