-- scenarios/effects/key_reused_other_payload.lua
return scenario {
  name = "Idempotency-Key reused with another payload: 409, stop",
  doc  = [[The ledger already holds this Idempotency-Key for a different
           payload (a bug upstream built the key from the customer instead of
           the order) and answers 409 Conflict. Retrying the same request gets
           the same 409; retrying with a fresh key would execute an operation
           nobody asked for twice. A good client stops after one attempt and
           reports the conflict as an error.]],
  tags = { "effects", "idempotency", "conflict" },

  effects = {
    fail { status = 409, code = "idempotency_key_reused", type = "invalid_request_error",
           message = "Keys for idempotent requests can only be used with the same "
                  .. "parameters they were first used with." },
  },
  idempotency = "honoured",

  client = { call = "effect", effect = "send_invoice", payload = { invoice = "INV-7" },
             deadline = 6, attempts = 3 },

  expect = {
    point = { "side_effects" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { 409 },
    outcome = "error",
    side_effects = true,
  },
}
