-- scenarios/effects/commit_then_drop_keys_ignored.lua
return scenario {
  name = "Side effect commits, answer lost twice; the server ignores keys",
  doc  = [[A flaky refund service applies the refund and then loses the
           response, twice in a row, and it ignores Idempotency-Key: every POST
           that reaches it is executed. Resending with the same key is not
           enough here; only asking the ledger "was this key applied?" before
           resending prevents a second refund. A good client asks, learns the
           refund went through, and stops: one refund, two requests (the POST
           and the lookup).]],
  tags = { "effects", "idempotency", "result-unknown" },

  effects = {
    effect { apply = true, respond = "drop" },
    effect { apply = true, respond = "drop" },
    effect { apply = true },
  },
  idempotency = "ignored",

  client = { call = "effect", effect = "refund", payload = { order = "A-1042", amount = 30 },
             deadline = 8, attempts = 3 },

  expect = {
    point = { "side_effects" },
    outcome = "ok",
    side_effects = true,
    max_requests = 2,
    within_deadline = true,
  },
}
