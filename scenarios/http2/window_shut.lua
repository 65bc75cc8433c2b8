-- scenarios/http2/window_shut.lua
return scenario {
  name = "HTTP/2 flow-control window that never opens, then answered",
  doc  = [[The first attempt gets its HEADERS (status 200) and then no DATA,
           as if the client's flow-control window were shut for good: the
           connection stays alive and PING and SETTINGS are answered, so a
           client that only watches for a dead connection (a TCP idle timer)
           waits forever. A good client has an overall or per-read deadline
           that counts time without progress, gives up on the attempt and
           retries, and gets the answer. Over HTTP/1.1 the step is a body
           stalled after its head.]],
  tags = { "transient", "network", "http2", "stall" },

  provider = {
    h2_window {},
    chat { content = "answered after the shut window" },
  },

  client = { deadline = 10, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
