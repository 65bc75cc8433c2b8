-- scenarios/permanent/payment_402.lua
return scenario {
  name = "402 Insufficient Balance is not retried",
  doc  = [[DeepSeek answers 402 "Insufficient Balance" when the account has run
           out of credit. Only a top-up fixes that, so the request must not be
           repeated: a good client stops after one attempt (and tells someone to
           top up) instead of retrying a bill that cannot be paid.]],
  tags = { "permanent", "quota", "billing" },

  provider = {
    fail { status = 402, code = "insufficient_balance", type = "insufficient_quota",
           message = "Insufficient Balance" },
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
