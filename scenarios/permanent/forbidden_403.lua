-- scenarios/permanent/forbidden_403.lua
return scenario {
  name = "403 permission denied is not retried",
  doc  = [[The key is valid but not allowed to do this (a region the provider
           does not serve, a model the project has no access to): 403. A
           permission does not appear by trying again. A good client makes one
           attempt and reports the error.]],
  tags = { "permanent", "auth" },

  provider = {
    fail { status = 403, code = "unsupported_country_region_territory",
           type = "permission_error",
           message = "Country, region, or territory not supported." },
  },

  client = { deadline = 6, attempts = 3 },

  expect = {
    point = { "no_retry_after" },
    attempts = 1,
    max_requests = 1,
    no_retry_after = { 403 },
    outcome = { "degraded", "error" },
    within_deadline = true,
  },
}
