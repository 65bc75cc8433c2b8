-- scenarios/ratelimit/retry_after_date.lua
return scenario {
  name = "Retry-After as an HTTP-date is honoured",
  doc  = [[Retry-After may also be a date ("Retry-After: Sun, 29 Nov 2026
           19:30:03 GMT") instead of a number of seconds; here it names a moment
           about 3 s ahead. A parser that expects a number fails on it. A good
           client parses the date, waits until then (measured against the wall
           clock) and retries once.]],
  tags = { "ratelimit", "retry-after", "transient" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after_date = 3 },
    chat { content = "hello" },
  },

  client = { deadline = 10, attempts = 3 },

  expect = {
    point = { "retry_after_honoured" },
    attempts = 2,
    retry_after_honoured = true,
    outcome = "ok",
    within_deadline = true,
  },
}
