-- scenarios/cohere/unavailable_503.lua
return scenario {
  name = "Cohere 503 twice, then answered",
  doc  = [[Two 503s ({"message": ...}, no Retry-After), then an answer. A good
           client backs off and retries; `cohere-ai` retries 408, 429 and
           5xx twice (three attempts) after about 1 s and 2 s.]],
  tags = { "cohere", "transient", "5xx", "backoff" },

  provider = {
    fail { status = 503, message = "The service is temporarily unavailable." },
    fail { status = 503, message = "The service is temporarily unavailable." },
    chat { content = "hello from cohere" },
  },

  client = { dialect = "cohere", deadline = 10, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 3,
    outcome = "ok",
    within_deadline = true,
  },
}
