-- scenarios/examples/reset_then_ok.lua
return scenario {
  name = "The connection is reset",
  doc  = [[The provider answers the request with a TCP reset (the client sees
           "connection reset by peer"). Like a drop, it is transient: retry,
           and the second attempt is answered.]],
  tags = { "example", "transient" },

  provider = {
    reset {},
    chat { content = "hello" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
  },
}
