-- scenarios/ollama/stream_no_done.lua
return scenario {
  name = "Ollama stream ends without done:true",
  doc  = [[The NDJSON stream sends its text lines, then the connection closes
           cleanly before the done:true line (a proxy cutting it at a line
           boundary). The answer is incomplete: a good client says so (the
           `ollama` package throws "Did not receive done or success response
           in stream.") and retries, never returning the partial text as the
           answer.]],
  tags = { "ollama", "stream", "no_end" },

  provider = {
    stream { content = "the first half of an answer", no_end = true },
    stream { content = "hello from ollama" },
  },

  client = { dialect = "ollama", call = "stream", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
  },
}
