-- scenarios/tools/invalid_arguments.lua
return scenario {
  name = "A tool call whose arguments are not JSON",
  doc  = [[The model answers a tool call whose arguments stop mid-string ('{"city":
           "Par'), as models do when they hit max tokens inside a call.
           Running it passes garbage to the tool. A good client
           validates the arguments against JSON before executing and
           does not run it.]],
  tags = { "tools", "shape" },

  provider = {
    chat { tool_calls = { { name = "get_weather", arguments = '{"city": "Par' } } },
  },

  client = { call = "tools", deadline = 6, attempts = 3 },

  expect = {
    point = { "tool_integrity" },
    tool_integrity = true,
    outcome = "ok",
    within_deadline = true,
  },
}
