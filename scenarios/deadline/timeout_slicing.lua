-- scenarios/deadline/timeout_slicing.lua
return scenario {
  name = "Per-attempt timeouts are slices of one deadline",
  doc  = [[The first two attempts would be answered only after 8 s; the third
           is answered at once. With a 6 s deadline and three attempts, a good
           client gives each attempt a slice of what is left (about 2 s), so
           it abandons the slow ones in time and still has time for the third.
           A client whose attempt timeout ignores the deadline waits 8 s on
           the first attempt and blows the deadline. (The abandoned slow
           answers are still billed by a real provider.)]],
  tags = { "deadline", "timeout", "slicing" },

  provider = {
    delay { 8, chat { content = "slow answer" } },
    delay { 8, chat { content = "slow answer" } },
    chat { content = "fast answer" },
  },

  client = { deadline = 6, attempts = 3, backoff = { base = 0.2, cap = 1 } },

  expect = {
    point = { "within_deadline" },
    attempts = 3,
    outcome = "ok",
    within_deadline = true,
  },
}
