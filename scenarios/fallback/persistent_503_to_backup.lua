-- scenarios/fallback/persistent_503_to_backup.lua
return scenario {
  name = "Primary keeps answering 503: the backup answers",
  doc  = [[The primary is down for good (503 on every attempt); the backup
           works. Retrying a transient error is right, but only up to a limit:
           a good client gives the primary its two attempts with backoff, then
           moves down the chain and answers from the backup within the 6 s
           deadline. A client that knows only one provider ends in an error.]],
  tags = { "fallback", "transient", "5xx" },

  providers = {
    { name = "primary", fail { status = 503, message = "The service is temporarily unavailable." } },
    { name = "backup", chat { content = "hello from the backup" } },
  },

  client = { deadline = 6, attempts = 2, backoff = { base = 0.5, cap = 2 } },

  expect = {
    point = { "outcome" },
    max_requests = 3,
    outcome = "ok",
    within_deadline = true,
  },
}
