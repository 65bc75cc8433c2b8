-- scenarios/deadline/retry_after_beyond_deadline.lua
return scenario {
  name = "Retry-After longer than the deadline: go to the backup",
  doc  = [[The primary answers 429 with "Retry-After: 5", but the call has only
           3 s in all. Waiting 5 s breaks the deadline; retrying sooner
           disobeys the provider and eats more of the rate limit. A good client
           sees that the wait cannot fit, stops trying the primary at once and
           asks the backup, answering well within the deadline.]],
  tags = { "deadline", "retry-after", "fallback", "ratelimit" },

  providers = {
    { name = "primary",
      fail { status = 429, code = "rate_limit_exceeded", type = "tokens",
             message = "Rate limit reached for tokens per min (TPM).", retry_after = 5 } },
    { name = "backup", chat { content = "hello from the backup" } },
  },

  client = { deadline = 3, attempts = 3 },

  expect = {
    point = { "within_deadline" },
    attempts = 1,
    max_requests = 2,
    retry_after_honoured = true,
    outcome = "ok",
    within_deadline = true,
  },
}
