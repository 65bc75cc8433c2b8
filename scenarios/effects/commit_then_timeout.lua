-- scenarios/effects/commit_then_timeout.lua
return scenario {
  name = "Side effect commits, then the answer never comes",
  doc  = [[The payment endpoint charges the card and then hangs: no answer
           until the client gives up. A timeout is not a failure, it is an
           unknown result. A good client times the attempt out after about a
           second, asks the ledger with the operation's key, learns the charge
           went through and returns it: one charge, well within the deadline.]],
  tags = { "effects", "idempotency", "result-unknown", "timeout" },

  effects = {
    effect { apply = true, respond = "hang" },
    effect { apply = true },
  },
  idempotency = "honoured",

  client = { call = "effect", effect = "charge_card", payload = { order = "A-1042", cents = 3000 },
             deadline = 6, attempts = 3, attempt_timeout = 1 },

  expect = {
    point = { "side_effects" },
    outcome = "ok",
    side_effects = true,
    max_requests = 2,
    within_deadline = true,
  },
}
