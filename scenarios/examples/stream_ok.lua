-- scenarios/examples/stream_ok.lua
return scenario {
  name = "A stream arrives whole",
  doc  = [[The provider streams its answer as server-sent events, one small
           piece every 50 ms, and ends it properly ([DONE] for OpenAI,
           message_stop for Anthropic). The client should assemble
           "Hello, world!" from one attempt.]],
  tags = { "example", "stream" },

  provider = {
    stream { chunks = { "Hello", ", ", "world", "!" }, interval = 0.05 },
  },

  client = { call = "stream", deadline = 5, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 1,
    outcome = "ok",
  },
}
