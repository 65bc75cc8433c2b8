-- scenarios/responses/auth_401.lua
return scenario {
  name = "Responses API: 401 is permanent",
  doc  = [[A wrong key gets 401 invalid_api_key from /v1/responses. Retrying cannot
           fix it: a good client stops after one attempt.]],
  tags = { "responses", "permanent" },

  provider = {
    fail { status = 401 },
  },

  client = { dialect = "responses", deadline = 6, attempts = 3 },

  expect = {
    point = { "max_requests" },
    attempts = 1,
    max_requests = 1,
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
