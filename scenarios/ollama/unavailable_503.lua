-- scenarios/ollama/unavailable_503.lua
return scenario {
  name = "Ollama 503 once, then answered",
  doc  = [[The server is busy (503 with {"error": "server busy, please try
           again.  maximum pending requests exceeded"}, what Ollama says when
           OLLAMA_MAX_QUEUE is full), then answers. A good client backs off
           and retries; the `ollama` npm package has no retry of its own and
           fails the call with ResponseError (status_code 503).]],
  tags = { "ollama", "transient", "5xx" },

  provider = {
    fail { status = 503, message = "server busy, please try again.  maximum pending requests exceeded" },
    chat { content = "hello from ollama" },
  },

  client = { dialect = "ollama", deadline = 8, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
