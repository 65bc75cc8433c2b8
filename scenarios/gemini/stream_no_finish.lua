-- scenarios/gemini/stream_no_finish.lua
return scenario {
  name = "Gemini stream closes without a finishReason",
  doc  = [[Every chunk arrives but none carries finishReason: nothing says the
           answer is complete. A good client retries and returns only
           the complete answer.]],
  tags = { "gemini", "stream", "shape" },

  provider = {
    stream { chunks = { "Roses are red, ", "violets are blue" }, interval = 0.05, no_end = true },
    stream { chunks = { "Roses are red, ", "violets are blue." }, interval = 0.05 },
  },

  client = { call = "stream", dialect = "gemini", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
    within_deadline = true,
  },
}
