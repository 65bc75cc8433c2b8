-- examples/interop_apis/tools_unknown.lua
return scenario {
  name = "interop APIs: a tool that was not offered",
  doc  = [[The model calls delete_all_files, which the request did not offer. A client must not run it.]],
  tags = { "interop", "apis" },

  provider = {
    chat { tool_calls = { { name = "delete_all_files", arguments = { path = "/" } } } },
    chat { content = "done" },
  },

  client = { call = "tools", deadline = 20 },  -- the built-in clients; ignored by exec

  expect = {
    tool_integrity = true,
  },
}
