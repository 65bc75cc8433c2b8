-- scenarios/ratelimit/retry_after_huge.lua
return scenario {
  name = "A Retry-After of one day is not slept",
  doc  = [[A misconfigured gateway answers 429 with "Retry-After: 86400": come
           back tomorrow. A client that obeys any value blindly freezes the call
           for a day. A good client caps what it honours (60 s by default),
           treats anything beyond as a bad value, and uses its own backoff,
           finishing well within the 8 s deadline.]],
  tags = { "ratelimit", "retry-after", "bad-header" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after = 86400 },
    chat { content = "hello" },
  },

  client = { deadline = 8, attempts = 3 },

  expect = {
    point = { "within_deadline" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
