-- examples/interop_apis/unavailable_503.lua
return scenario {
  name = "interop APIs: 503, then answered",
  doc  = [[One 503 (Gemini UNAVAILABLE), then an answer.]],
  tags = { "interop", "apis" },

  provider = {
    fail { status = 503 },
    chat { content = "hello after the 503" },
  },

  expect = {
    max_requests = 2,
  },
}
