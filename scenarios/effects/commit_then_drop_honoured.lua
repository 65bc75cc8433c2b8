-- scenarios/effects/commit_then_drop_honoured.lua
return scenario {
  name = "Side effect commits, then its answer is lost (keys honoured)",
  doc  = [[The effect endpoint ("send an email") executes the effect and then
           drops the connection: the client cannot tell whether the email went
           out. Treating that as "failed" and sending again sends it twice. A
           good client sends one Idempotency-Key for the operation and, before
           sending anything again, asks the ledger with that key: it learns the
           email was sent and returns the stored result. Exactly one email.]],
  tags = { "effects", "idempotency", "result-unknown" },

  effects = {
    effect { apply = true, respond = "drop" },
    effect { apply = true },
  },
  idempotency = "honoured",

  client = { call = "effect", effect = "send_email", deadline = 8, attempts = 3 },

  expect = {
    point = { "side_effects" },
    outcome = "ok",
    side_effects = true,
    max_requests = 2,
    within_deadline = true,
  },
}
