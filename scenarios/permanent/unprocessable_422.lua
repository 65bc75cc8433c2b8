-- scenarios/permanent/unprocessable_422.lua
return scenario {
  name = "422 unprocessable request is not retried",
  doc  = [[The request is well-formed JSON but its content cannot be processed
           (an invalid parameter combination, a bad tool schema): 422. The
           request must be fixed, not repeated. A good client makes exactly one
           attempt.]],
  tags = { "permanent", "http" },

  provider = {
    fail { status = 422, code = "invalid_value", type = "invalid_request_error",
           message = "Invalid value for 'tools[0].function.parameters'." },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { 422 },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
