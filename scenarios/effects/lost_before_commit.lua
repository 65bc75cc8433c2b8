-- scenarios/effects/lost_before_commit.lua
return scenario {
  name = "Connection lost before the effect ran: resend with the same key",
  doc  = [[The connection drops before the effect endpoint executed anything.
           The client cannot know that from the drop alone, so it asks the
           ledger, which says "not applied". Now a resend is safe, and it must
           carry the same Idempotency-Key (a new key would make the server see
           a new operation). The email goes out exactly once.]],
  tags = { "effects", "idempotency", "result-unknown" },

  effects = {
    effect { apply = false, respond = "drop" },
    effect { apply = true },
  },
  idempotency = "honoured",

  client = { call = "effect", effect = "send_email", deadline = 8, attempts = 3 },

  expect = {
    point = { "side_effects" },
    attempts = 2,
    outcome = "ok",
    side_effects = true,
    within_deadline = true,
  },
}
