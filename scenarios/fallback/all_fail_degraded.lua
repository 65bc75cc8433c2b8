-- scenarios/fallback/all_fail_degraded.lua
return scenario {
  name = "Every provider fails: a degraded answer, on time",
  doc  = [[The primary answers 503 and the backup 529 overloaded, on every
           attempt. There is no real answer to give. A good client tries each
           provider within its limits and then returns a degraded answer that
           says plainly it is degraded (never an empty string, never a stack
           trace), within the deadline and without further retries.]],
  tags = { "fallback", "degraded", "5xx" },

  providers = {
    { name = "primary", fail { status = 503, message = "The service is temporarily unavailable." } },
    { name = "backup", fail { status = 529, type = "overloaded_error", message = "Overloaded" } },
  },

  client = { deadline = 6, attempts = 2, backoff = { base = 0.5, cap = 2 },
             degraded = "The assistant is busy right now; your question has been saved." },

  expect = {
    point = { "outcome" },
    max_requests = 4,
    outcome = "degraded",
    within_deadline = true,
  },
}
