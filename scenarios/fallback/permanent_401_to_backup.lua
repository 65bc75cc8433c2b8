-- scenarios/fallback/permanent_401_to_backup.lua
return scenario {
  name = "Primary rejects the key (401): the backup answers",
  doc  = [[The primary provider's key has expired (401), the backup provider's
           key is fine. A permanent error is permanent for this provider only:
           it must not be retried there, and it must not end the whole call
           either. A good client skips the primary after one attempt and gets
           the answer from the backup: two requests in all.]],
  tags = { "fallback", "permanent", "auth" },

  providers = {
    { name = "primary",
      fail { status = 401, code = "invalid_api_key", type = "invalid_request_error",
             message = "Incorrect API key provided." } },
    { name = "backup", chat { content = "hello from the backup" } },
  },

  client = { deadline = 6, attempts = 3, chain = { "primary", "backup" } },

  expect = {
    point = { "no_retry_after", "outcome" },
    attempts = 1,
    max_requests = 2,
    no_retry_after = { 401 },
    outcome = "ok",
    within_deadline = true,
  },
}
