-- scenarios/deadline/hang_forever.lua
return scenario {
  name = "Every attempt hangs: the deadline ends the call",
  doc  = [[The provider accepts every request and never answers. Per-attempt
           timeouts alone do not protect the user: three attempts of 10 s (or
           60 s) each is half a minute (or three minutes) of spinner. A good
           client has one deadline for the whole call (4 s here), slices it
           among its attempts, and returns a degraded answer when the deadline
           is reached, not a second later.]],
  tags = { "deadline", "hang", "timeout" },

  provider = {
    hang {},
  },

  client = { deadline = 4, attempts = 3 },

  expect = {
    point = { "within_deadline" },
    attempts = { min = 1, max = 3 },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
