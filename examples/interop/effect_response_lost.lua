-- examples/interop/effect_response_lost.lua
return scenario {
  name = "interop: a side effect applied, its answer lost",
  doc  = [[Run the client with --effect: it POSTs /v1/effects/send_email. The
           first attempt sends the email and then drops the connection, so
           the client cannot tell whether it went out. Without an
           Idempotency-Key, a retry sends a second email; with one (reused on
           the retry) the ledger replays the stored result.]],
  tags = { "interop", "effects" },

  effects = {
    effect { apply = true, respond = "drop" },
    effect { apply = true },
  },
  idempotency = "honoured",
  client = { call = "effect" },  -- FUSEBOX_CALL=effect for outside clients

  expect = {
    outcome = "ok",
    side_effects = true,
    max_requests = 2,
  },
}
