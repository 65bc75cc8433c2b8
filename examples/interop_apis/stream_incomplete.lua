-- examples/interop_apis/stream_incomplete.lua
return scenario {
  name = "interop APIs: a stream that ends incomplete (max tokens)",
  doc  = [[Every piece arrives, and the stream ends cut short: response.incomplete (max_output_tokens), finish_reason length, stop_reason max_tokens, finishReason MAX_TOKENS.]],
  tags = { "interop", "apis" },

  provider = {
    stream { chunks = { "cut", " short" }, incomplete = "max_output_tokens" },
  },

  client = { call = "stream", deadline = 20 },  -- the built-in clients; ignored by exec

  expect = {
    max_requests = 1,
  },
}
