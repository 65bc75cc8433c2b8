-- scenarios/gemini/unavailable_503.lua
return scenario {
  name = "Gemini 503 UNAVAILABLE, then answered",
  doc  = [["The model is overloaded. Please try again later." (503 UNAVAILABLE). A
           good client backs off and retries.]],
  tags = { "gemini", "transient", "5xx" },

  provider = {
    fail { status = 503, message = "The model is overloaded. Please try again later." },
    chat { content = "hello" },
  },

  client = { dialect = "gemini", deadline = 8, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
