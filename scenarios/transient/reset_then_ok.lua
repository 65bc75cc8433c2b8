-- scenarios/transient/reset_then_ok.lua
return scenario {
  name = "Connection reset, then answered",
  doc  = [[The provider answers the request with a TCP reset ("connection reset
           by peer"), as a proxy does when an upstream dies. Like a drop, it is
           transient and safe to retry for a read-only chat call. A good client
           retries once after a short backoff and succeeds; it must not treat
           the reset as fatal.]],
  tags = { "transient", "network" },

  provider = {
    reset {},
    chat { content = "hello after a reset" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
