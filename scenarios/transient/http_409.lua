-- scenarios/transient/http_409.lua
return scenario {
  name = "409 Conflict on a chat call, then answered",
  doc  = [[OpenAI documents 409 as a conflict with another request in flight
           (for example on the same resource); its SDKs retry it. For a chat
           completion it is transient: a good client waits a moment and sends
           the same request again, which succeeds.]],
  tags = { "transient", "http" },

  provider = {
    fail { status = 409, code = "conflict",
           message = "The request conflicts with another request in progress." },
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
