-- scenarios/responses/unavailable_503.lua
return scenario {
  name = "Responses API: 503 twice, then answered",
  doc  = [[The Responses API sheds load with 503 server_error. A good client backs
           off and succeeds on the third attempt.]],
  tags = { "responses", "transient", "5xx" },

  provider = {
    fail { status = 503 },
    fail { status = 503 },
    chat { content = "hello" },
  },

  client = { dialect = "responses", deadline = 8, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 3,
    outcome = "ok",
    within_deadline = true,
  },
}
