-- scenarios/transient/hang_then_ok.lua
return scenario {
  name = "First attempt hangs, the per-attempt timeout rescues it",
  doc  = [[The provider accepts the first request and never answers. Only the
           client's own attempt timeout can end that wait; it is a transient
           failure, so the client retries, and the retry is answered at once.
           A good client gives each attempt about a second here and is done
           within its 5 s deadline; a client with a 10 s or 60 s attempt
           timeout keeps the user waiting far longer.]],
  tags = { "transient", "timeout", "hang" },

  provider = {
    hang {},
    chat { content = "sorry for the wait" },
  },

  client = { deadline = 5, attempts = 3, attempt_timeout = 1 },

  expect = {
    point = { "within_deadline" },
    attempts = 2,
    outcome = "ok",
    within_deadline = true,
  },
}
