-- scenarios/stream/stall.lua
return scenario {
  name = "A stream goes silent for 8 s",
  doc  = [[The first stream sends one piece and then nothing for 8 s: the
           connection stays open, no byte follows. Only an idle timeout (time
           without a byte) catches this early; a total timeout of 10 or 60 s
           lets the user stare at a frozen answer. A good client gives up on
           the silent stream after 1 s of silence, discards its partial text,
           retries, and delivers the complete answer within its 6 s deadline.]],
  tags = { "stream", "timeout", "idle" },

  provider = {
    stream { chunks = { "Thinking", "...", " done." }, interval = 0.05,
             stall_after = 1, stall = 8 },
    stream { chunks = { "Thinking", "...", " done." }, interval = 0.05 },
  },

  client = { call = "stream", deadline = 6, attempts = 3, idle_timeout = 1 },

  expect = {
    point = { "within_deadline" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
