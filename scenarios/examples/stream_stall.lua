-- scenarios/examples/stream_stall.lua
return scenario {
  name = "A stream goes silent",
  doc  = [[The first stream sends one piece and then nothing at all: the
           connection stays open but no byte follows. Only an idle timeout
           on the client side ends this; a client without one waits forever.
           The retry gets a complete stream.]],
  tags = { "example", "stream", "deadline" },

  provider = {
    stream { chunks = { "Thinking", "...", " done." }, interval = 0.05,
             stall_after = 1 },           -- stall = nil: silent for good
    stream { chunks = { "Thinking", "...", " done." }, interval = 0.05 },
  },

  client = { call = "stream", deadline = 10, attempts = 3, attempt_timeout = 2 },

  expect = {
    point = { "within_deadline" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
    no_stream_splice = true,
  },
}
