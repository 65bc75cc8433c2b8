-- scenarios/transient/anthropic_529_overloaded.lua
return scenario {
  name = "Anthropic 529 overloaded_error, twice, then answered",
  doc  = [[Anthropic answers 529 with an overloaded_error when the API as a
           whole is out of capacity. 529 is not a standard HTTP status, so a
           client that retries only the 5xx codes it knows by name gives up.
           A good client (calling /v1/messages) treats it as transient, backs
           off and succeeds on the third attempt.]],
  tags = { "transient", "anthropic", "5xx" },

  provider = {
    fail { status = 529, type = "overloaded_error", message = "Overloaded" },
    fail { status = 529, type = "overloaded_error", message = "Overloaded" },
    chat { content = "hello from Claude" },
  },

  client = { dialect = "anthropic", deadline = 8, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 3,
    outcome = "ok",
    within_deadline = true,
  },
}
