-- examples/interop/stream_drop.lua
return scenario {
  name = "interop: a stream cut after two chunks",
  doc  = [[Run the client with --stream. The first stream sends two pieces of
           the answer and the connection closes without the end marker
           ([DONE] / message_stop). The partial text must never be joined to
           a retry's text, nor be printed as the answer (fusebox exec takes
           the client's stdout as its answer text for no_stream_splice).]],
  tags = { "interop", "stream" },

  provider = {
    stream { chunks = { "The answer ", "is ", "forty-two." }, interval = 0.05,
             drop_after = 2 },
    stream { chunks = { "The answer ", "is ", "forty-two." }, interval = 0.05 },
  },

  client = { call = "stream" },  -- what the built-in clients do (fusebox run, matrix)

  expect = {
    outcome = "ok",
    no_stream_splice = true,
    max_requests = 2,
  },
}
