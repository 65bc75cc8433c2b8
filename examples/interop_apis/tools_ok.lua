-- examples/interop_apis/tools_ok.lua
return scenario {
  name = "interop APIs: one tool call",
  doc  = [[The model calls get_weather(city = Paris): the client runs it once at the effect endpoint.]],
  tags = { "interop", "apis" },

  provider = {
    chat { tool_calls = { { name = "get_weather", arguments = { city = "Paris" } } } },
    chat { content = "It is sunny in Paris." },
  },

  client = { call = "tools", deadline = 20 },  -- the built-in clients; ignored by exec

  expect = {
    tool_integrity = true,
  },
}
