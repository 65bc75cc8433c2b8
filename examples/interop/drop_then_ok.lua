-- examples/interop/drop_then_ok.lua
return scenario {
  name = "interop: connection closed without an answer, then success",
  doc  = [[The first attempt is read and the connection closed without a byte
           back (curl: "Empty reply from server"). A transient network
           failure: one retry gets the answer. A client that does not retry
           it fails a call that would have succeeded.]],
  tags = { "interop", "transient" },

  provider = {
    drop {},
    chat { content = "hello after the drop" },
  },

  expect = {
    outcome = "ok",
    max_requests = 2,
  },
}
