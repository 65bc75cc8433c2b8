-- scenarios/permanent/model_404.lua
return scenario {
  name = "404 model_not_found is not retried",
  doc  = [[The request names a model that does not exist (a typo, a retired
           model): 404 model_not_found. The model will not appear on the second
           try. A good client stops after one attempt; with a fallback chain it
           would move on to the next provider instead.]],
  tags = { "permanent", "http" },

  provider = {
    fail { status = 404, code = "model_not_found", type = "invalid_request_error",
           message = "The model 'gpt-4o-mini-2099' does not exist or you do not have access to it." },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { 404 },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
