-- scenarios/gemini/stream_drop.lua
return scenario {
  name = "Gemini stream dropped mid-answer",
  doc  = [[streamGenerateContent?alt=sse sends two chunks and the connection
           closes. A good client retries the whole answer and never
           splices the partial text.]],
  tags = { "gemini", "stream", "transient" },

  provider = {
    stream { chunks = { "one", " two", " three" }, interval = 0.05, drop_after = 2 },
    stream { chunks = { "one", " two", " three." }, interval = 0.05 },
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
