-- scenarios/http2/goaway.lua
return scenario {
  name = "HTTP/2 GOAWAY before the stream, then answered",
  doc  = [[The provider sends GOAWAY(NO_ERROR) whose last-stream-id is below
           the first attempt's stream and closes the connection, as a server
           being drained in a deploy does. Streams above the last-stream-id
           were never processed (RFC 9113 6.8): a good client retries them on
           a new connection and gets the answer. Over HTTP/1.1 the step is a
           closed connection.]],
  tags = { "transient", "network", "http2" },

  provider = {
    h2_goaway {},
    chat { content = "answered on a new connection" },
  },

  client = { deadline = 10, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
