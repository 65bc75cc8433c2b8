-- scenarios/cohere/stream_error.lua
return scenario {
  name = "Cohere stream ends in finish_reason ERROR",
  doc  = [[The typed stream starts (message-start, content-start, a
           content-delta), then ends with message-end whose finish_reason is
           ERROR and whose error says why. The answer failed: a good client
           treats it as a failure (and may retry), never as the answer.]],
  tags = { "cohere", "stream", "error_event" },

  provider = {
    stream { content = "the first half of an answer", error_after = 2,
             error = { status = 500, message = "internal error while generating" } },
    stream { content = "hello from cohere" },
  },

  client = { dialect = "cohere", call = "stream", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
  },
}
