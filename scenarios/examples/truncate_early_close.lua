-- scenarios/examples/truncate_early_close.lua
return scenario {
  name = "The body stops before its Content-Length",
  doc  = [[The response promises the full body in its Content-Length, sends
           40 bytes of it and closes the connection. HTTP libraries report
           this as a transfer error (curl: "transfer closed with outstanding
           read data remaining"). The client should retry.]],
  tags = { "example", "shape", "transient" },

  provider = {
    truncate { chat { content = "hello there" }, at = 40, mode = "early-close" },
    chat { content = "hello there" },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
  },
}
