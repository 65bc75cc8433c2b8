-- scenarios/ratelimit/token_bucket.lua
return scenario {
  name = "A token-bucket rate limiter in front of the provider",
  doc  = [[Four calls arrive at once at a provider limited to 30 requests a
           minute with a burst of 2, enforced as a token bucket (one request
           every 2 s once the burst is spent, not thirty at the top of each
           minute), the way Anthropic documents it. The limiter answers the
           excess with 429 and a Retry-After, and x-ratelimit-* headers on
           every answer. A good client honours each Retry-After (coming back
           early is refused again and counts against the limit), so the calls
           drain through the bucket and all of them succeed.]],
  tags = { "ratelimit", "retry-after", "token-bucket" },

  provider = {
    chat { content = "hello", usage = { input = 20, output = 20 } },
  },

  ratelimit = { rpm = 30, burst = 2, tpm = 100000, style = "openai" },

  client = { requests = 4, concurrency = 4, deadline = 20, attempts = 5,
             breaker = false, retry_budget = false },

  expect = {
    point = { "retry_after_honoured" },
    attempts = { min = 1, max = 5 },
    retry_after_honoured = true,
    outcome = "ok",
    within_deadline = true,
  },
}
