-- scenarios/stream/anthropic_overloaded_event.lua
return scenario {
  name = "Anthropic stream ends in an overloaded_error event",
  doc  = [[An Anthropic message stream starts fine (message_start, a text delta)
           and then sends "event: error" with an overloaded_error, the way the
           API sheds load mid-stream. The HTTP status was 200. A good client
           recognises the event as a transient failure, discards the partial
           text and retries the whole message.]],
  tags = { "stream", "anthropic", "transient" },

  provider = {
    stream { chunks = { "Bonjour", ", le ", "monde" }, interval = 0.05,
             error_after = 1,
             error = { type = "overloaded_error", message = "Overloaded" } },
    stream { chunks = { "Hello", ", ", "world" }, interval = 0.05 },
  },

  client = { call = "stream", dialect = "anthropic", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
    within_deadline = true,
  },
}
