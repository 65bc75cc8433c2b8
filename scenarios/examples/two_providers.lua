-- scenarios/examples/two_providers.lua
return scenario {
  name = "The primary is down, the backup answers",
  doc  = [[Two fake providers, each at its own base URL: "primary" (also at
           /v1) fails every request with 503, "backup" (/backup/v1) works. A
           client with a fallback chain should stop hammering the primary
           after its attempts and get the answer from the backup.]],
  tags = { "example", "fallback", "transient" },

  providers = {
    { name = "primary", fail { status = 503 } },
    { name = "backup",  chat { content = "hello from the backup" } },
  },

  client = { deadline = 10, attempts = 2, chain = { "primary", "backup" } },

  expect = {
    point = { "outcome" },
    outcome = "ok",
    within_deadline = true,
  },
}
