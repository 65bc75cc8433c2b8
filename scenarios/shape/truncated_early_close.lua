-- scenarios/shape/truncated_early_close.lua
return scenario {
  name = "A 200 body that stops before its Content-Length",
  doc  = [[The response promises the full body in its Content-Length, sends 40
           bytes and closes the connection (curl: "transfer closed with
           outstanding read data remaining"). The status line said 200, but no
           whole answer arrived. A good client treats it as a broken response
           and retries; the second answer is complete.]],
  tags = { "shape", "truncated", "network" },

  provider = {
    truncate { chat { content = "The capital of France is Paris." }, at = 40,
               mode = "early-close" },
    chat { content = "The capital of France is Paris." },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
