-- scenarios/storm/layers_amplification.lua
return scenario {
  name = "Retries stacked in two layers multiply: 3 x 3 = 9",
  doc  = [[The provider answers 503 to everything. The application wraps its
           SDK call in its own "retry 3 times" loop, and the SDK already makes
           3 attempts: every user question becomes 9 requests on a provider
           that is down, and 9 times the wait. A good design retries in exactly
           one layer: 3 requests at most, then a degraded answer.]],
  tags = { "storm", "amplification", "layers", "5xx" },

  provider = {
    fail { status = 503, message = "The service is temporarily unavailable." },
  },

  client = { layers = 3, deadline = 10, attempts = 3, backoff = { base = 0.2, cap = 1 } },

  expect = {
    point = { "max_requests" },
    max_requests = 3,
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
