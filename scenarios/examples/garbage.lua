-- scenarios/examples/garbage.lua
return scenario {
  name = "A 200 whose body is an HTML error page",
  doc  = [[A gateway in front of the provider answers 200 with an HTML page
           instead of JSON. The status says success but the body cannot be
           parsed: a shape error. The client should retry rather than hand
           HTML to its caller.]],
  tags = { "example", "shape" },

  provider = {
    garbage { body = "<html><body><h1>502 Bad Gateway</h1></body></html>" },
    chat { content = "hello" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
  },
}
