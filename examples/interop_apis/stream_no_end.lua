-- examples/interop_apis/stream_no_end.lua
return scenario {
  name = "interop APIs: a stream without its end",
  doc  = [[The stream closes cleanly without its end marker (response.completed, [DONE], message_stop, finishReason).]],
  tags = { "interop", "apis" },

  provider = {
    stream { chunks = { "no", " end" }, no_end = true },
    stream { chunks = { "whole", " answer." } },
  },

  client = { call = "stream", deadline = 20 },  -- the built-in clients; ignored by exec

  expect = {
    no_stream_splice = true,
    max_requests = 2,
  },
}
