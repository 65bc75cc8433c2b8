-- scenarios/gemini/garbage.lua
return scenario {
  name = "Gemini: 200 with an HTML page",
  doc  = [[A proxy in front of the API answers 200 with an HTML error page. A good
           client parses before it trusts, counts a shape error, retries
           and succeeds.]],
  tags = { "gemini", "shape" },

  provider = {
    garbage {},
    chat { content = "hello" },
  },

  client = { dialect = "gemini", deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
