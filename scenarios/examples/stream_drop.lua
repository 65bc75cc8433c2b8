-- scenarios/examples/stream_drop.lua
return scenario {
  name = "A stream is cut off mid-answer",
  doc  = [[The first stream sends two pieces and then the connection closes
           without the end marker, as when a load balancer drops a long
           response. The client must notice the answer is incomplete, throw
           the partial text away (never glue it to the retry) and try again;
           the second stream is complete.]],
  tags = { "example", "stream", "transient" },

  provider = {
    stream { chunks = { "The answer ", "is ", "forty-two." }, interval = 0.05,
             drop_after = 2 },
    stream { chunks = { "The answer ", "is ", "forty-two." }, interval = 0.05 },
  },

  client = { call = "stream", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
  },
}
