-- scenarios/transient/http_408.lua
return scenario {
  name = "408 Request Timeout, then answered",
  doc  = [[A proxy in front of the provider answers 408: it gave up waiting for
           the request. Nothing was processed, so the same request can simply be
           sent again. A good client classifies 408 as transient, backs off
           briefly and succeeds on the second attempt.]],
  tags = { "transient", "http" },

  provider = {
    fail { status = 408, code = "request_timeout",
           message = "The server timed out waiting for the request." },
    chat { content = "hello" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
