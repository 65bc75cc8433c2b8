-- scenarios/transient/http_502.lua
return scenario {
  name = "502 Bad Gateway, then answered",
  doc  = [[A gateway between the client and the model server answers 502: the
           upstream it forwarded to gave a bad answer or none. The request may
           never have reached the model. A good client treats 502 as transient,
           backs off and retries, and the retry succeeds.]],
  tags = { "transient", "http", "5xx", "gateway" },

  provider = {
    fail { status = 502, message = "Bad gateway." },
    chat { content = "hello" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
