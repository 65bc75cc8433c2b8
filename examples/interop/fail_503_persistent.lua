-- examples/interop/fail_503_persistent.lua
return scenario {
  name = "interop: 503 that never clears",
  doc  = [[The provider answers 503 to every attempt, without Retry-After.
           Retrying is right, but only a few times: the client must give up
           and report the error. Bounded amplification here is at most four
           arrivals (a first attempt and three retries); curl --retry 3 uses
           all four, over 1 + 2 + 4 s of waiting.]],
  tags = { "interop", "transient" },

  provider = {
    fail { status = 503, message = "The service is temporarily unavailable." },
  },

  expect = {
    outcome = { "degraded", "error" },
    max_requests = 4,
  },
}
