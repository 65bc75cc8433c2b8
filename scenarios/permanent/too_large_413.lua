-- scenarios/permanent/too_large_413.lua
return scenario {
  name = "413 request_too_large is not retried (Anthropic)",
  doc  = [[Anthropic rejects a request body over its size limit with 413
           request_too_large (for example a prompt carrying high-resolution
           scans). The same body is too large every time. A good client makes
           one attempt and hands the job back for splitting, rather than
           keeping it in a retry loop where it blocks everything behind it.]],
  tags = { "permanent", "anthropic", "http" },

  provider = {
    fail { status = 413, type = "request_too_large",
           message = "Request exceeds the maximum allowed number of bytes." },
  },

  client = { dialect = "anthropic", deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { 413 },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
