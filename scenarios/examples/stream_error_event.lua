-- scenarios/examples/stream_error_event.lua
return scenario {
  name = "An error event arrives inside a 200 stream",
  doc  = [[The response starts as a normal 200 stream, sends one piece, then
           an error event (OpenAI: a data line holding {"error": ...};
           Anthropic: "event: error"). The HTTP status said success, so a
           client that only checks the status keeps a half answer. It
           should treat the event as a failed attempt and retry.]],
  tags = { "example", "stream", "transient" },

  provider = {
    stream { chunks = { "Partial ", "answer" }, interval = 0.05,
             error_after = 1,
             error = { status = 500, code = "server_error",
                       message = "The server had an error while processing your request." } },
    stream { chunks = { "Full ", "answer" }, interval = 0.05 },
  },

  client = { call = "stream", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
  },
}
