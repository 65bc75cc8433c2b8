-- scenarios/storm/breaker_opens.lua
return scenario {
  name = "Circuit breaker: a dead provider stops getting requests",
  doc  = [[Twenty calls, one after another, meet a provider that answers 503 to
           everything. Without a breaker each call spends its full retries on a
           provider that is plainly down: 60 requests of pure load on a sick
           service. A good client counts consecutive failures, opens its
           breaker after five, and fails the remaining calls fast (degraded)
           without sending anything until the cooldown is over.]],
  tags = { "storm", "breaker", "5xx" },

  provider = {
    fail { status = 503, message = "The service is temporarily unavailable." },
  },

  client = { requests = 20, concurrency = 1, deadline = 5, attempts = 2,
             backoff = { base = 0.2, cap = 1 },
             breaker = { threshold = 5, cooldown = 30 }, retry_budget = false },

  expect = {
    point = { "max_requests" },
    max_requests = 5,
    outcome = { "degraded", "error" },
  },
}
