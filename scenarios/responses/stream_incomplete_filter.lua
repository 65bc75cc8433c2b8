-- scenarios/responses/stream_incomplete_filter.lua
return scenario {
  name = "Responses stream ends with response.incomplete (content_filter)",
  doc  = [[The stream ends with response.incomplete, incomplete_details.reason
           content_filter: the model's output was withheld. It is a
           refusal, not a network fault: retrying the same prompt gets
           the same answer. A good client stops and reports it instead
           of returning the partial text as a success.]],
  tags = { "responses", "stream", "permanent" },

  provider = {
    stream { chunks = { "I can", " help with" }, interval = 0.05, incomplete = "content_filter" },
  },

  client = { call = "stream", dialect = "responses", deadline = 6, attempts = 3 },

  expect = {
    point = { "max_requests" },
    attempts = 1,
    max_requests = 1,
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
