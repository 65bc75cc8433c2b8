-- scenarios/gemini/resource_exhausted_retry_delay.lua
return scenario {
  name = "Gemini 429 RESOURCE_EXHAUSTED with RetryInfo retryDelay 2s",
  doc  = [[Gemini does not send Retry-After: it advises the wait in the error body,
           a google.rpc.RetryInfo detail with retryDelay "2s". A good
           client reads it, waits at least 2 s, retries once and
           succeeds. retry_after_honoured judges the retryDelay as it
           judges Retry-After elsewhere.]],
  tags = { "gemini", "ratelimit", "retry-after", "transient" },

  provider = {
    fail { status = 429, retry_after = 2,
           message = "Resource has been exhausted (e.g. check quota)." },
    chat { content = "hello from Gemini" },
  },

  client = { dialect = "gemini", deadline = 8, attempts = 3 },

  expect = {
    point = { "retry_after_honoured" },
    attempts = 2,
    retry_after_honoured = true,
    outcome = "ok",
    within_deadline = true,
  },
}
