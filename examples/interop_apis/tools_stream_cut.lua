-- examples/interop_apis/tools_stream_cut.lua
return scenario {
  name = "interop APIs: a stream cut inside a tool call's arguments",
  doc  = [[The streamed get_weather call is cut after 8 bytes of its arguments, then the retried turn streams it whole. A client must run only the whole call, once.]],
  tags = { "interop", "apis" },

  provider = {
    stream { tool_calls = { { name = "get_weather", arguments = { city = "Paris" } } }, drop_after = 1 },
    stream { tool_calls = { { name = "get_weather", arguments = { city = "Paris" } } } },
    chat { content = "It is sunny in Paris." },
  },

  client = { call = "stream_tools", deadline = 20 },  -- the built-in clients; ignored by exec

  expect = {
    tool_integrity = true,
  },
}
