-- scenarios/permanent/should_retry_false.lua
return scenario {
  name = "x-should-retry: false overrides a 503",
  doc  = [[The provider answers 503 but adds the header "x-should-retry: false"
           (OpenAI and Anthropic send it to tell SDKs what to do). The header
           knows better than the status table: this failure will not clear on
           a retry. A good client honours it and stops after one attempt.]],
  tags = { "permanent", "headers" },

  provider = {
    fail { status = 503, message = "This deployment is being decommissioned.",
           headers = { ["x-should-retry"] = "false" } },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { 503 },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
