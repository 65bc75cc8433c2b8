-- scenarios/gemini/safety_block.lua
return scenario {
  name = "Gemini answer blocked: finishReason SAFETY",
  doc  = [[The candidate ends with finishReason SAFETY: the output was blocked.
           Retrying the same prompt gets the same block. A good client
           stops and reports it.]],
  tags = { "gemini", "permanent" },

  provider = {
    chat { content = "", incomplete = "content_filter" },
  },

  client = { dialect = "gemini", deadline = 6, attempts = 3 },

  expect = {
    point = { "max_requests" },
    attempts = 1,
    max_requests = 1,
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
