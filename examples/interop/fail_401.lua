-- examples/interop/fail_401.lua
return scenario {
  name = "interop: 401 invalid key, every time",
  doc  = [[Every attempt is rejected with 401 invalid_api_key. A wrong key
           cannot be fixed by retrying: one attempt, then an error. The Node
           SDKs stop at once; a wrapper that retries on any exception sends
           the same bad key three times.]],
  tags = { "interop", "permanent" },

  provider = {
    fail { status = 401, code = "invalid_api_key", type = "invalid_request_error",
           message = "Incorrect API key provided." },
  },

  expect = {
    outcome = { "degraded", "error" },
    no_retry_after = { 401 },
    max_requests = 1,
  },
}
