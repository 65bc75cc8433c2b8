-- scenarios/transient/drop_then_ok.lua
return scenario {
  name = "Connection dropped twice, then answered",
  doc  = [[The provider reads the request and closes the connection without a
           single byte back, twice in a row (a load balancer recycling, a
           crashed worker). No response means nothing was decided: it is a
           transient failure. A good client retries with exponential backoff
           (each wait longer than the last, with jitter) and gets the third
           answer; a fixed one-second loop shows no growth.]],
  tags = { "transient", "network", "backoff" },

  provider = {
    drop {},
    drop {},
    chat { content = "third time lucky" },
  },

  client = { deadline = 10, attempts = 3,
             backoff = { base = 2, cap = 8, jitter = 0.1 } },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 3,
    outcome = "ok",
    backoff = { growth = true },
    within_deadline = true,
  },
}
