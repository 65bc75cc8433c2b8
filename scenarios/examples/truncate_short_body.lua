-- scenarios/examples/truncate_short_body.lua
return scenario {
  name = "A complete response whose JSON is cut short",
  doc  = [[The HTTP response is well framed (status 200, a Content-Length
           that matches), but the body holds only the first 40 bytes of the
           JSON, as when a proxy truncates. The client must not crash or
           return garbage: it is a shape error, worth one retry.]],
  tags = { "example", "shape" },

  provider = {
    truncate { chat { content = "hello there" }, at = 40 },
    chat { content = "hello there" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
  },
}
