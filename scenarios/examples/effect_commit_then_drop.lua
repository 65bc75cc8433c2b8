-- scenarios/examples/effect_commit_then_drop.lua
return scenario {
  name = "A side effect commits, then its answer is lost",
  doc  = [[The effect endpoint (say, "send an email") applies the effect and
           then drops the connection: the client cannot know whether the email
           went out. A safe client sends an Idempotency-Key and reuses it on
           the retry, so the ledger replays the stored result instead of
           sending the email twice.]],
  tags = { "example", "effects" },

  effects = {
    effect { apply = true, respond = "drop" },
    effect { apply = true },
  },
  idempotency = "honoured",

  client = { call = "effect", deadline = 8, attempts = 3 },

  expect = {
    point = { "side_effects" },
    outcome = "ok",
    side_effects = { at_most_once = true },
  },
}
