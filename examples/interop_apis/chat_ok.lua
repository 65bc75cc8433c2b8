-- examples/interop_apis/chat_ok.lua
return scenario {
  name = "interop APIs: a plain answer",
  doc  = [[One answer, in the dialect of whatever API the client calls: it must reach the scenario and parse.]],
  tags = { "interop", "apis" },

  provider = {
    chat { content = "hello from fusebox" },
  },

  expect = {
    max_requests = 1,
  },
}
