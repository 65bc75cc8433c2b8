-- scenarios/transient/http_500.lua
return scenario {
  name = "500 internal error, then answered",
  doc  = [[The provider fails with 500 server_error ("The server had an error
           while processing your request"). Server errors are usually
           momentary: a good client backs off and retries once, and the second
           attempt succeeds.]],
  tags = { "transient", "http", "5xx" },

  provider = {
    fail { status = 500, code = "server_error", type = "server_error",
           message = "The server had an error while processing your request." },
    chat { content = "hello" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
