-- scenarios/stream/drop_after_chunks.lua
return scenario {
  name = "A stream is cut after two chunks",
  doc  = [[The first stream sends two pieces of the answer and then the
           connection closes without the end marker, as when a load balancer
           drops a long response. The partial text is not an answer. A good
           client notices the missing end, throws the partial text away (never
           glues it in front of the retry's text) and retries; the second
           stream is complete.]],
  tags = { "stream", "transient", "network" },

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
    within_deadline = true,
  },
}
