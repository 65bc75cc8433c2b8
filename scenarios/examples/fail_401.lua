-- scenarios/examples/fail_401.lua
return scenario {
  name = "A bad API key is not retried",
  doc  = [[The provider rejects the key with 401 invalid_api_key. Retrying
           cannot fix a wrong key, it only burns time and rate limit: the
           client should give up after the first attempt: with one provider
           there is nothing else to try, so it answers with a degraded text
           that says so.]],
  tags = { "example", "permanent" },

  provider = {
    fail { status = 401, code = "invalid_api_key", type = "invalid_request_error",
           message = "Incorrect API key provided." },
  },

  client = { deadline = 5, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    no_retry_after = { 401 },
    outcome = "degraded",
  },
}
