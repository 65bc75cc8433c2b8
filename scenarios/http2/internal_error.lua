-- scenarios/http2/internal_error.lua
return scenario {
  name = "HTTP/2 stream reset with INTERNAL_ERROR, then answered",
  doc  = [[The first attempt's stream is reset with RST_STREAM(INTERNAL_ERROR):
           unlike REFUSED_STREAM, the server may have begun the work. For a
           chat call (no side effect) a good client retries with backoff and
           gets the answer; a call with a side effect would need an
           idempotency key first. Over HTTP/1.1 the step is a TCP reset.]],
  tags = { "transient", "network", "http2" },

  provider = {
    h2_reset { code = "internal_error" },
    chat { content = "answered after the reset" },
  },

  client = { deadline = 10, attempts = 3 },

  expect = {
    point = { "outcome", "attempts" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
