-- scenarios/shape/missing_fields.lua
return scenario {
  name = "A 200 JSON answer without its choices",
  doc  = [[The body is valid JSON and looks like a chat completion (id, object,
           model) but has no "choices", so there is no answer text in it. A
           client that indexes choices[0] blindly crashes; one that defaults to
           "" returns an empty answer as if it were real. A good client checks
           the fields it needs, treats the gap as a shape error and retries.]],
  tags = { "shape", "json" },

  provider = {
    garbage { body = '{"id":"chatcmpl-123","object":"chat.completion",'
                  .. '"created":1764440000,"model":"gpt-4o-mini"}' },
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
