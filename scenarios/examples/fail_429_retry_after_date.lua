-- scenarios/examples/fail_429_retry_after_date.lua
return scenario {
  name = "429 with Retry-After as an HTTP date is honoured",
  doc  = [[Retry-After may also be a date ("Retry-After: Sun, 29 Nov 2026
           19:30:02 GMT") rather than a number of seconds. Here it names a
           moment 2 s ahead. The client must parse the date, wait until then,
           and retry once.]],
  tags = { "example", "ratelimit", "transient" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after_date = 2 },
    chat { content = "hello" },
  },

  client = { deadline = 8, attempts = 3 },

  expect = {
    point = { "retry_after_honoured" },
    attempts = 2,
    retry_after_honoured = true,
    outcome = "ok",
  },
}
