-- scenarios/examples/delay_then_ok.lua
return scenario {
  name = "A slow answer is abandoned, the retry is fast",
  doc  = [[The first answer would come after 2 s, but the client allows each
           attempt only 1 s: it must stop waiting, retry, and take the quick
           second answer. The late first answer is still billed by a real
           provider, which the trace shows.]],
  tags = { "example", "deadline", "transient" },

  provider = {
    delay { 2, chat { content = "slow" } },
    chat { content = "fast" },
  },

  client = { deadline = 6, attempts = 3, attempt_timeout = 1 },

  expect = {
    point = { "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
