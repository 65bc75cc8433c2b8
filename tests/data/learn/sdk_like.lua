return profile {
  name = "sdk_like", version = "test", dialect = "openai",
  max_attempts = 3,
  timeout = 10, -- policy_client.py: urlopen(..., timeout=10)
  backoff = { base = 0.5, factor = 2 },
  retries = { 408, 409, 429, ">=500", "connection" },
  retry_after = { honoured = true, forms = { "retry-after-ms", "seconds", "date" },
                  cap = false, invalid = "immediate", past = "immediate" },
  idempotency_key = false,
}
