-- scenarios/http2/refused_stream.lua
return scenario {
  name = "HTTP/2 stream refused, then answered",
  doc  = [[Over HTTP/2 the provider answers the first attempt with
           RST_STREAM(REFUSED_STREAM): the server says it did no work on the
           stream (RFC 9113 8.7), as a front end shedding load during a deploy
           does. Nothing was processed, so a good client retries at once or
           after a short wait, on a new stream or connection, and gets the
           answer. Over HTTP/1.1 the same step is a TCP reset.]],
  tags = { "transient", "network", "http2" },

  provider = {
    h2_reset { code = "refused_stream" },
    chat { content = "answered on a fresh stream" },
  },

  client = { deadline = 10, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
