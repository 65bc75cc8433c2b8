-- scenarios/examples/fail_503_then_ok.lua
return scenario {
  name = "Two 503s, then success",
  doc  = [[The provider is briefly unavailable: two 503 answers without any
           Retry-After, then a normal answer. The client should back off
           (exponentially, with jitter) between attempts and succeed on the
           third.]],
  tags = { "example", "transient" },

  provider = {
    fail { status = 503, message = "The service is temporarily unavailable." },
    fail { status = 503, message = "The service is temporarily unavailable." },
    chat { content = "back again" },
  },

  client = { deadline = 10, attempts = 4, backoff = { base = 0.2, cap = 1 } },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 3,
    outcome = "ok",
    within_deadline = true,
  },
}
