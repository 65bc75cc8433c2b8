-- scenarios/incidents/eight_pm_peak.lua
return scenario {
  name = "Incident: the 8 pm peak (an expired key, retried nine times)",
  doc  = [[8 pm, the busiest hour of a tutoring assistant, and its model API key
           has expired: every call gets 401, after about a second of peak-time
           latency. The app wrapped each call in try/except and retried 3
           times, and the SDK underneath retried as well, so one question
           became up to 9 requests, each billed, and parents watched a spinner
           for 3 s, 9 s or more before seeing the same error. A 401 cannot be
           fixed by retrying. A good client retries in one layer only, never
           retries a 401, and answers with a clear degraded message after the
           first attempt, well inside the 8 s budget of a question.]],
  tags = { "incident", "permanent", "auth", "amplification", "layers" },

  provider = {
    delay { 1, fail { status = 401, code = "invalid_api_key", type = "authentication_error",
                      message = "Authentication Fails, Your api key is invalid." } },
  },

  client = { layers = 3, deadline = 8, attempts = 3,
             degraded = "The assistant is busy right now; your question has been saved." },

  expect = {
    point = { "no_retry_after", "max_requests" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { 401 },
    outcome = "degraded",
    within_deadline = true,
  },
}
