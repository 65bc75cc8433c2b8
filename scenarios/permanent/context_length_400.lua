-- scenarios/permanent/context_length_400.lua
return scenario {
  name = "400 context_length_exceeded is not retried",
  doc  = [[The conversation is longer than the model's context window and the
           provider answers 400 context_length_exceeded. Sending the very same
           request again can only fail the same way, at the same cost in time
           and rate limit. A good client stops after one attempt and reports
           the error (the fix is to trim the prompt, not to retry).]],
  tags = { "permanent", "http" },

  provider = {
    fail { status = 400, code = "context_length_exceeded", type = "invalid_request_error",
           message = "This model's maximum context length is 128000 tokens. However, "
                  .. "your messages resulted in 131072 tokens." },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { "permanent" },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
