-- scenarios/gemini/invalid_argument_400.lua
return scenario {
  name = "Gemini 400 INVALID_ARGUMENT is permanent",
  doc  = [[A malformed request gets 400 INVALID_ARGUMENT. Sending it again gets the
           same answer: a good client stops after one attempt.]],
  tags = { "gemini", "permanent" },

  provider = {
    fail { status = 400, message = "Invalid JSON payload received." },
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
