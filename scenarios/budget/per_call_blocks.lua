-- scenarios/budget/per_call_blocks.lua
return scenario {
  name = "A call over its token budget is blocked before sending",
  doc  = [[A student asks for a whole essay rewritten, allowing a 2,000-token
           answer, in a feature capped at 1,000 tokens a call. Checking the
           bill after the answer comes back is too late: the money is spent. A
           good client estimates the call first (prompt plus max_tokens), sees
           it is over the cap and blocks it with a clear message: no request
           at all.]],
  tags = { "budget", "tokens" },

  provider = {
    chat { content = "a long and expensive review", usage = { input = 110, output = 2000 } },
  },

  client = { prompt = "Rewrite my essay in full: " .. string.rep("lorem ipsum dolor sit amet ", 15),
             max_tokens = 2000, budget = { per_call = 1000 }, deadline = 6 },

  expect = {
    point = { "max_requests" },
    attempts = 0,
    max_requests = 0,
    outcome = "blocked",
  },
}
