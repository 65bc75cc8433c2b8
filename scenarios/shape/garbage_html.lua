-- scenarios/shape/garbage_html.lua
return scenario {
  name = "A 200 whose body is an HTML error page",
  doc  = [[A gateway answers 200 with an HTML page ("502 Bad Gateway") instead
           of JSON. A client that trusts the status hands HTML to its caller or
           crashes on the parse. A good client sees that the body is not an
           answer, counts a shape error, retries and gets real JSON.]],
  tags = { "shape", "gateway" },

  provider = {
    garbage { body = "<html><head><title>502 Bad Gateway</title></head>"
                  .. "<body><h1>502 Bad Gateway</h1><hr>nginx</body></html>" },
    chat { content = "hello" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
