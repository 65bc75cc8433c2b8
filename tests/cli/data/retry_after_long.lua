-- tests/cli/data/retry_after_long.lua: a 429 asking for 30 s, then the
-- answer. A client that honours it is still waiting when a short
-- `exec --timeout` kills it (tests/cli/exec_clients.sh).
return scenario {
  name = "429 with Retry-After: 30",
  tags = { "test", "ratelimit" },
  provider = {
    fail { status = 429, retry_after = 30 },
    chat { content = "after the long wait" },
  },
  expect = { retry_after_honoured = true, max_requests = 2 },
}
