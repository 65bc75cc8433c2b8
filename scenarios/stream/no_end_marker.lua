-- scenarios/stream/no_end_marker.lua
return scenario {
  name = "A stream ends without its end marker",
  doc  = [[The first stream sends its text chunks and then closes cleanly,
           but without a finish chunk (no finish_reason / stop_reason) and
           without "data: [DONE]" (OpenAI) or message_stop (Anthropic).
           Nothing on the wire says the answer is complete: it was cut by a
           proxy at a chunk boundary. A good client treats a missing end marker
           as an incomplete answer, retries, and returns only the complete
           second stream, never the two texts joined.]],
  tags = { "stream", "shape" },

  provider = {
    stream { chunks = { "Roses are red, ", "violets are blue" }, interval = 0.05,
             no_end = true },
    stream { chunks = { "Roses are red, ", "violets are blue." }, interval = 0.05 },
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
