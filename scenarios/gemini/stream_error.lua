-- scenarios/gemini/stream_error.lua
return scenario {
  name = "Gemini stream ends in an error chunk",
  doc  = [[After one chunk the stream carries
           {"error":{"code":503,"status":"UNAVAILABLE"}} with HTTP
           status 200. A good client treats it as a failed attempt and
           retries.]],
  tags = { "gemini", "stream", "transient" },

  provider = {
    stream { chunks = { "one", " two", " three" }, interval = 0.05, error_after = 1,
             error = { status = 503 } },
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
