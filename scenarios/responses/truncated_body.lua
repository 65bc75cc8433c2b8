-- scenarios/responses/truncated_body.lua
return scenario {
  name = "Responses API: a 200 whose JSON is cut short",
  doc  = [[The response object arrives with a matching Content-Length but only its
           first 60 bytes. A good client parses before it trusts,
           retries and succeeds.]],
  tags = { "responses", "shape", "truncated" },

  provider = {
    truncate { chat { content = "The capital of France is Paris." }, at = 60 },
    chat { content = "The capital of France is Paris." },
  },

  client = { dialect = "responses", deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
