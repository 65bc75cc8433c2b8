-- scenarios/storm/retry_budget_outage.lua
return scenario {
  name = "Retry budget: a long outage does not triple the load",
  doc  = [[Thirty calls meet a provider in a long outage (503 on everything).
           Three attempts each would triple the traffic on a service that is
           already failing. A good client shares a retry budget across calls
           (a token bucket: each retry takes a token, each success returns a
           fraction of one): after five retries the bucket is empty and later
           calls fail fast after their first attempt. 35 requests, not 90.]],
  tags = { "storm", "retry-budget", "5xx" },

  provider = {
    fail { status = 503, message = "The service is temporarily unavailable." },
  },

  client = { requests = 30, concurrency = 1, deadline = 5, attempts = 3,
             backoff = { base = 0.2, cap = 1 }, breaker = false,
             retry_budget = { capacity = 5, cost = 1, refill = 0.2 } },

  expect = {
    point = { "max_requests" },
    max_requests = 35,
    outcome = { "degraded", "error" },
  },
}
