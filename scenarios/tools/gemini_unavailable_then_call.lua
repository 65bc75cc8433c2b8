-- scenarios/tools/gemini_unavailable_then_call.lua
return scenario {
  name = "Gemini: 503, then a function call run once",
  doc  = [[Gemini answers 503 UNAVAILABLE, then a functionCall for get_weather. A
           good client retries, runs the call once with valid arguments.]],
  tags = { "tools", "gemini", "transient" },

  provider = {
    fail { status = 503 },
    chat { tool_calls = { { name = "get_weather", arguments = { city = "Paris" } } } },
  },

  client = { call = "tools", dialect = "gemini", deadline = 8, attempts = 3 },

  expect = {
    point = { "tool_integrity" },
    tool_integrity = true,
    outcome = "ok",
    within_deadline = true,
  },
}
