-- scenarios/responses/stream_no_completed.lua
return scenario {
  name = "Responses stream closes without response.completed",
  doc  = [[Every text delta and the item's done events arrive, then the connection
           closes cleanly without response.completed. Nothing says the
           response finished. A good client counts it as incomplete,
           retries and returns only the complete second answer.]],
  tags = { "responses", "stream", "shape" },

  provider = {
    stream { chunks = { "Roses are red, ", "violets are blue" }, interval = 0.05, no_end = true },
    stream { chunks = { "Roses are red, ", "violets are blue." }, interval = 0.05 },
  },

  client = { call = "stream", dialect = "responses", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
    within_deadline = true,
  },
}
