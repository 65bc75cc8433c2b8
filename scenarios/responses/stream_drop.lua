-- scenarios/responses/stream_drop.lua
return scenario {
  name = "Responses stream dropped after two deltas",
  doc  = [[The connection closes after two response.output_text.delta events. A
           good client retries the whole response and never splices the
           partial text into the retry.]],
  tags = { "responses", "stream", "transient" },

  provider = {
    stream { chunks = { "one", " two", " three" }, interval = 0.05, drop_after = 2 },
    stream { chunks = { "one", " two", " three." }, interval = 0.05 },
  },

  client = { call = "stream", dialect = "responses", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
    within_deadline = true,
  },
}
