-- examples/interop_apis/stream_failed.lua
return scenario {
  name = "interop APIs: a stream that ends in the API's error",
  doc  = [[The stream sends one piece, then the API's error ending (Responses: error + response.failed; Gemini: an error chunk), then the retry streams cleanly. A client that returns the piece as the answer took a failure for success.]],
  tags = { "interop", "apis" },

  provider = {
    stream { chunks = { "partial", " answer" }, error_after = 1, error = { status = 500 } },
    stream { chunks = { "whole", " answer." } },
  },

  client = { call = "stream", deadline = 20 },  -- the built-in clients; ignored by exec

  expect = {
    no_stream_splice = true,
    max_requests = 2,
  },
}
