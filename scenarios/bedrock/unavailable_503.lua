-- scenarios/bedrock/unavailable_503.lua
return scenario {
  name = "Bedrock 503 ServiceUnavailableException twice, then answered",
  doc  = [[Two 503s (x-amzn-errortype: ServiceUnavailableException,
           {"message": ...}, no Retry-After), then an answer. A good client
           backs off and retries; the AWS SDK's standard mode retries
           transient errors (500, 502, 503, 504, resets) up to 3 attempts in
           all, with full jitter under 50 ms x 2^n.]],
  tags = { "bedrock", "transient", "5xx" },

  provider = {
    fail { status = 503, message = "The service is temporarily unavailable." },
    fail { status = 503, message = "The service is temporarily unavailable." },
    chat { content = "hello from bedrock" },
  },

  client = { dialect = "bedrock", deadline = 10, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 3,
    outcome = "ok",
    within_deadline = true,
  },
}
