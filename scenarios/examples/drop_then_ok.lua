-- scenarios/examples/drop_then_ok.lua
return scenario {
  name = "The connection is closed without an answer",
  doc  = [[The provider reads the request and closes the connection without
           sending a single byte back (curl: "Empty reply from server"). This
           is a transient network failure: retry, and the second attempt is
           answered.]],
  tags = { "example", "transient" },

  provider = {
    drop {},
    chat { content = "hello" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
  },
}
