-- scenarios/examples/fail_429_retry_after_ms.lua
return scenario {
  name = "429 with retry-after-ms: 1500 is honoured",
  doc  = [[OpenAI can say how long to wait in milliseconds, in the
           "retry-after-ms" header, instead of (or besides) Retry-After. Here
           only retry-after-ms is sent, asking for 1.5 s. A client that reads
           only Retry-After retries too early.]],
  tags = { "example", "ratelimit", "transient" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after_ms = 1500 },
    chat { content = "hello" },
  },

  client = { deadline = 8, attempts = 3 },

  expect = {
    point = { "retry_after_honoured" },
    attempts = 2,
    retry_after_honoured = true,
    outcome = "ok",
  },
}
