-- scenarios/examples/hang.lua
return scenario {
  name = "The first request never gets an answer",
  doc  = [[The provider accepts the connection and then says nothing, ever.
           Only the client's own per-attempt timeout can end the wait; a
           client that has none hangs for good. After 1 s the client should
           give up on that attempt and retry; the retry is answered.]],
  tags = { "example", "deadline", "transient" },

  provider = {
    hang {},
    chat { content = "hello" },
  },

  client = { deadline = 6, attempts = 3, attempt_timeout = 1 },

  expect = {
    point = { "within_deadline" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
