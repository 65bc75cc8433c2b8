-- scenarios/examples/anthropic_529_overloaded.lua
return scenario {
  name = "Anthropic 529 overloaded, then success",
  doc  = [[Anthropic answers 529 with an overloaded_error when it has no
           capacity. It is not a standard HTTP status, so clients that retry
           only on 5xx they know (500, 502, 503) give up here. Point an
           Anthropic client at /v1/messages: it should retry and succeed.]],
  tags = { "example", "transient", "anthropic" },

  provider = {
    fail { status = 529, type = "overloaded_error", message = "Overloaded" },
    chat { content = "hello" },
  },

  client = { dialect = "anthropic", deadline = 8, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
  },
}
