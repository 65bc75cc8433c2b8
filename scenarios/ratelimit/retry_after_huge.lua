-- scenarios/ratelimit/retry_after_huge.lua
return scenario {
  name = "A Retry-After of one day is not slept",
  doc  = [[A misconfigured gateway answers 429 with "Retry-After: 86400": come
           back tomorrow. A client that obeys any value blindly freezes the call
           for a day. A good client caps what it honours (60 s by default) and,
           asked for more, gives that provider up (falling back, or ending the
           call degraded) well within the 8 s deadline. Retrying it after its
           own backoff instead would come back long before the provider said
           it may, which is what `retry_after_honoured` forbids.]],
  tags = { "ratelimit", "retry-after", "bad-header" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after = 86400 },
    chat { content = "hello" },
  },

  client = { deadline = 8, attempts = 3 },

  expect = {
    point = { "within_deadline", "retry_after_honoured" },
    attempts = 1,
    outcome = { "degraded", "error" },
    retry_after_honoured = true,
    within_deadline = true,
  },
}
