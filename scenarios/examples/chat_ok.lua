-- scenarios/examples/chat_ok.lua
return scenario {
  name = "A healthy provider answers at once",
  doc  = [[The baseline: every request gets a well-formed chat completion on
           the first try. A client that retries or waits here has a bug;
           use this scenario to check your set-up before the faulty ones.]],
  tags = { "example", "chat" },

  provider = {
    chat { content = "hello", usage = { input = 12, output = 1 } },
  },

  client = { deadline = 5, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 1,
    outcome = "ok",
    within_deadline = true,
  },
}
