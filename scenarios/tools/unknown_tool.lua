-- scenarios/tools/unknown_tool.lua
return scenario {
  name = "The model calls a tool it was not offered",
  doc  = [[The request offers get_weather; the model answers with a call to
           delete_all_files. A good client runs only tools it offered
           and refuses this one.]],
  tags = { "tools", "permanent" },

  provider = {
    chat { tool_calls = { { name = "delete_all_files", arguments = { path = "/" } } } },
  },

  client = { call = "tools", deadline = 6, attempts = 3 },

  expect = {
    point = { "tool_integrity" },
    tool_integrity = true,
    outcome = "ok",
    within_deadline = true,
  },
}
