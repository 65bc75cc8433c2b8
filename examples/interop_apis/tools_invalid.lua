-- examples/interop_apis/tools_invalid.lua
return scenario {
  name = "interop APIs: tool arguments that are not JSON",
  doc  = [[The model's get_weather arguments stop mid-string. A client must not run them.]],
  tags = { "interop", "apis" },

  provider = {
    chat { tool_calls = { { name = "get_weather", arguments = '{"city": "Par' } } },
    chat { content = "done" },
  },

  client = { call = "tools", deadline = 20 },  -- the built-in clients; ignored by exec

  expect = {
    tool_integrity = true,
  },
}
