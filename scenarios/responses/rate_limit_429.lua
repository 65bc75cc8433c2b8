-- scenarios/responses/rate_limit_429.lua
return scenario {
  name = "Responses API: 429 with Retry-After: 2, then answered",
  doc  = [[POST /v1/responses is rate limited: 429 rate_limit_exceeded in OpenAI's
           error shape with Retry-After: 2. A good client waits at least
           2 s, retries once and reads the answer from the response's
           output items.]],
  tags = { "responses", "ratelimit", "retry-after", "transient" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after = 2 },
    chat { content = "hello from the Responses API" },
  },

  client = { dialect = "responses", deadline = 8, attempts = 3 },

  expect = {
    point = { "retry_after_honoured" },
    attempts = 2,
    retry_after_honoured = true,
    outcome = "ok",
    within_deadline = true,
  },
}
