-- scenarios/permanent/auth_401.lua
return scenario {
  name = "401 invalid_api_key is not retried",
  doc  = [[The API key is wrong or has expired: 401 invalid_api_key. No amount
           of retrying fixes a key; a client that retries three times just
           makes the user wait three times as long for the same error. A good
           client gives up after the first attempt, at once.]],
  tags = { "permanent", "auth" },

  provider = {
    fail { status = 401, code = "invalid_api_key", type = "invalid_request_error",
           message = "Incorrect API key provided: sk-...abcd." },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { 401 },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
