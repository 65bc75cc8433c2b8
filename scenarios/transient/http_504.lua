-- scenarios/transient/http_504.lua
return scenario {
  name = "504 Gateway Timeout, then answered",
  doc  = [[A gateway gave up waiting for the model and answers 504. The model
           may or may not have run (for a chat call that only costs money), and
           the next attempt may well be faster. A good client retries after a
           short backoff and gets the answer.]],
  tags = { "transient", "http", "5xx", "gateway" },

  provider = {
    fail { status = 504, message = "Gateway timeout." },
    chat { content = "hello" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
