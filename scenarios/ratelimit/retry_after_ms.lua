-- scenarios/ratelimit/retry_after_ms.lua
return scenario {
  name = "retry-after-ms: 1500 is honoured",
  doc  = [[OpenAI can say how long to wait in milliseconds, in the
           "retry-after-ms" header, with no Retry-After at all. A client that
           reads only Retry-After falls back to its own backoff and comes back
           too early. A good client reads retry-after-ms first, waits at least
           1.5 s and succeeds.]],
  tags = { "ratelimit", "retry-after", "transient", "openai" },

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
    within_deadline = true,
  },
}
