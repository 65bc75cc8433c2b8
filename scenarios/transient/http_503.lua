-- scenarios/transient/http_503.lua
return scenario {
  name = "503 twice, then answered: exponential backoff",
  doc  = [[The provider is briefly unavailable: two 503 answers without any
           Retry-After, then a normal one. A good client backs off
           exponentially with jitter between attempts (the second wait clearly
           longer than the first) and succeeds on the third; a fixed-interval
           loop has no growth and, across a fleet, retries in lockstep.]],
  tags = { "transient", "http", "5xx", "backoff" },

  provider = {
    fail { status = 503, message = "The service is temporarily unavailable." },
    fail { status = 503, message = "The service is temporarily unavailable." },
    chat { content = "back again" },
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
