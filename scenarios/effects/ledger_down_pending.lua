-- scenarios/effects/ledger_down_pending.lua
return scenario {
  name = "Result unknown and the ledger is down: pending, not repeated",
  doc  = [[A booking is created and then the connection drops; when the client
           asks the ledger what happened, the ledger answers 503. Nobody can
           say whether the booking exists. Repeating it blind may book twice;
           calling it failed may lose a real booking. A good client does
           neither: it reports the operation as pending (for a person or a
           later job to reconcile) and sends nothing more.]],
  tags = { "effects", "idempotency", "result-unknown", "pending" },

  effects = {
    effect { apply = true, respond = "drop" },
    effect { apply = true },
  },
  idempotency = "honoured",
  ledger = "down",

  client = { call = "effect", effect = "create_booking", payload = { slot = "2026-12-01T10:00" },
             deadline = 8, attempts = 3 },

  expect = {
    point = { "side_effects" },
    attempts = 1,
    outcome = "pending",
    side_effects = true,
    max_requests = 2,
    within_deadline = true,
  },
}
