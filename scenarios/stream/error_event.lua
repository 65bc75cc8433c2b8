-- scenarios/stream/error_event.lua
return scenario {
  name = "An error event inside a 200 stream",
  doc  = [[The response starts as a normal 200 stream, sends one piece, then an
           in-band error event (a data line holding {"error": {...}}) and ends.
           The HTTP status said success, so a client that checks only the
           status keeps half an answer. A good client reads the event, treats
           the attempt as failed (server_error is transient), drops the partial
           text and retries.]],
  tags = { "stream", "transient" },

  provider = {
    stream { chunks = { "Partial ", "answer" }, interval = 0.05,
             error_after = 1,
             error = { status = 500, code = "server_error", type = "server_error",
                       message = "The server had an error while processing your request." } },
    stream { chunks = { "Full ", "answer" }, interval = 0.05 },
  },

  client = { call = "stream", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
    within_deadline = true,
  },
}
