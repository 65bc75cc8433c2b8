-- scenarios/responses/stream_failed.lua
return scenario {
  name = "Responses stream ends in an error event and response.failed",
  doc  = [[A streamed response starts (response.created, a text delta) and then
           sends an error event and response.failed, with HTTP status
           200. openai-node yields both as ordinary events: a client
           that only concatenates output_text deltas returns half an
           answer as success. A good client treats response.failed as a
           failed attempt, discards the partial text and retries.]],
  tags = { "responses", "stream", "transient" },

  provider = {
    stream { chunks = { "The answer", " is", " 42" }, interval = 0.05, error_after = 1,
             error = { status = 500, code = "server_error" } },
    stream { chunks = { "The answer", " is", " 42." }, interval = 0.05 },
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
