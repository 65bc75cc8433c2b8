-- scenarios/permanent/quota_429.lua
return scenario {
  name = "429 insufficient_quota is not a rate limit",
  doc  = [[OpenAI uses 429 for two opposite things: rate_limit_exceeded (wait
           and it clears) and insufficient_quota (the plan or balance is used
           up; waiting changes nothing). A client that looks only at the status
           retries the quota error like a rate limit. A good client reads the
           error code, stops after one attempt and reports the quota problem.]],
  tags = { "permanent", "quota", "billing", "ratelimit" },

  provider = {
    fail { status = 429, code = "insufficient_quota", type = "insufficient_quota",
           message = "You exceeded your current quota, please check your plan and billing details." },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { "quota" },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
