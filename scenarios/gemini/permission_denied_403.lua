-- scenarios/gemini/permission_denied_403.lua
return scenario {
  name = "Gemini 403 PERMISSION_DENIED is permanent",
  doc  = [[The key has no access to the model: 403 PERMISSION_DENIED. A good client
           stops after one attempt.]],
  tags = { "gemini", "permanent" },

  provider = {
    fail { status = 403, message = "Permission denied: Consumer has been suspended." },
  },

  client = { dialect = "gemini", deadline = 6, attempts = 3 },

  expect = {
    point = { "max_requests" },
    attempts = 1,
    max_requests = 1,
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
