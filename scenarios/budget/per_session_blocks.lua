-- scenarios/budget/per_session_blocks.lua
return scenario {
  name = "The session token budget runs out: later calls are blocked",
  doc  = [[A session may spend 250 tokens. Each answer costs 100 (20 in, 80
           out) and each call is estimated at about 70 before it is sent. After
           two answers (200 spent) the third call would go over the limit. A
           good client charges what answers really cost, checks the estimate
           before each call, and blocks calls 3 to 5 without sending them.]],
  tags = { "budget", "tokens", "session" },

  provider = {
    chat { content = "a short answer", usage = { input = 20, output = 80 } },
  },

  client = { requests = 5, concurrency = 1, budget = { per_session = 250 }, deadline = 6 },

  expect = {
    point = { "max_requests" },
    attempts = 1,
    max_requests = 2,
    outcome = { "ok", "blocked" },
  },
}
