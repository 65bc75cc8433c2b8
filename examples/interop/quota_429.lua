-- examples/interop/quota_429.lua
return scenario {
  name = "interop: 429 insufficient_quota, every time",
  doc  = [[OpenAI answers 429 with code insufficient_quota when the account is
           out of credit. The status is the rate limit's, but waiting cannot
           fix it: a client that reads the body stops after one attempt. One
           that retries every 429 burns its retries (and its caller's time)
           on an error that will not go away.]],
  tags = { "interop", "permanent", "quota" },

  provider = {
    fail { status = 429, code = "insufficient_quota", type = "insufficient_quota",
           message = "You exceeded your current quota, please check your plan and billing details." },
  },

  expect = {
    outcome = { "degraded", "error" },
    no_retry_after = { "quota" },
    max_requests = 1,
  },
}
