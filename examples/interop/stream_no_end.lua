-- examples/interop/stream_no_end.lua
return scenario {
  name = "interop: a stream that ends without its end marker",
  doc  = [[Run the client with --stream. The first stream sends "The answer is "
           and then ends cleanly at the HTTP level (a proper last chunk) but
           without a finish chunk (no finish_reason / stop_reason) and without
           [DONE] (OpenAI) or message_stop (Anthropic). The answer is
           incomplete; a client that only watches the connection takes the
           half answer for the whole one. The retry would be complete.]],
  tags = { "interop", "stream" },

  provider = {
    stream { chunks = { "The answer ", "is " }, interval = 0.05, no_end = true },
    stream { chunks = { "The answer ", "is ", "forty-two." }, interval = 0.05 },
  },

  client = { call = "stream" },  -- what the built-in clients do (fusebox run, matrix)

  expect = {
    outcome = "ok",
    no_stream_splice = true,
    max_requests = 2,
  },
}
