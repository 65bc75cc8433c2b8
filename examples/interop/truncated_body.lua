-- examples/interop/truncated_body.lua
return scenario {
  name = "interop: a 200 whose body is cut short, then success",
  doc  = [[The first answer is a 200 whose Content-Length promises the whole
           completion but the connection closes after 40 bytes. The client
           cannot use it; the request is a safe retry (a chat completion has
           no side effect), and the second answer is whole.]],
  tags = { "interop", "shape", "transient" },

  provider = {
    truncate { chat { content = "hello, this answer will be cut" }, at = 40,
               mode = "early-close" },
    chat { content = "hello, whole this time" },
  },

  expect = {
    outcome = "ok",
    max_requests = 2,
  },
}
