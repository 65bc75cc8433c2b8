return profile {
  name = "jittered", version = "test", dialect = "openai",
  max_attempts = 3,
  timeout = 10, -- policy_client.py: urlopen(..., timeout=10)
  backoff = { base = 0.4, factor = 2, jitter = "subtract", fraction = 0.25 },
  retries = { 429, ">=500" },
  retry_after = { honoured = true, forms = { "seconds", "date" }, cap = 8, over_cap = "backoff",
                  invalid = "stop", past = "immediate" },
  idempotency_key = false,
}
