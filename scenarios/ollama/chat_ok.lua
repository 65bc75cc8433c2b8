-- scenarios/ollama/chat_ok.lua
return scenario {
  name = "Ollama answers at once",
  doc  = [[/api/chat (or /api/generate) answers the first call: whole, or as
           NDJSON lines ending in done:true when the client streams (Ollama's
           default). Any client that speaks Ollama gets "hello from ollama".]],
  tags = { "ollama", "baseline" },

  provider = {
    chat { content = "hello from ollama" },
  },

  client = { dialect = "ollama" },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 1,
    outcome = "ok",
  },
}
