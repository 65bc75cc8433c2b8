-- scenarios/incidents/exhausted_balance.lua
return scenario {
  name = "Incident: the exhausted balance retried as a rate limit",
  doc  = [[A video-summary tool ran on one provider account. The balance ran
           out; the provider answered 429 insufficient_quota (DeepSeek says 402
           Insufficient Balance), and the tool's retry logic saw "429" and
           treated it as a rate limit: every request was retried with backoff,
           users waited, and the retries ate what little quota was left. Only a
           top-up fixes a quota. A good client reads the error code, never
           retries a quota error, and switches to the backup (a cheaper model)
           at once, telling someone to top up.]],
  tags = { "incident", "quota", "billing", "fallback", "permanent" },

  providers = {
    { name = "primary",
      fail { status = 429, code = "insufficient_quota", type = "insufficient_quota",
             message = "You exceeded your current quota, please check your plan and billing details." } },
    { name = "backup", chat { content = "Summary (by the backup model): ..." } },
  },

  client = { requests = 5, concurrency = 1, deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 10,
    no_retry_after = { "quota" },
    outcome = "ok",
    within_deadline = true,
  },
}
