-- scenarios/shape/truncated_short_body.lua
return scenario {
  name = "A 200 whose JSON is cut short (well framed)",
  doc  = [[The response is 200 with a Content-Length that matches, but the body
           holds only the first 40 bytes of the JSON, as when a proxy or a
           buffer limit truncates it. The status says success; the body says
           otherwise. A good client parses before it trusts, counts this as a
           shape error (retryable, tallied apart from network errors), retries
           and succeeds instead of crashing or returning half an answer.]],
  tags = { "shape", "truncated" },

  provider = {
    truncate { chat { content = "The capital of France is Paris." }, at = 40 },
    chat { content = "The capital of France is Paris." },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
