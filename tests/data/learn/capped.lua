return profile {
  name = "capped", version = "test", dialect = "openai",
  max_attempts = 4,
  timeout = 10, -- policy_client.py: urlopen(..., timeout=10)
  backoff = { base = 0.5, factor = 3 },
  retries = { { status = 429, except = { "insufficient_quota" } }, 500, 502, 503, 504 },
  retry_after = { honoured = true, forms = { "seconds" }, cap = 10, over_cap = "stop",
                  invalid = "backoff", past = "backoff" },
  idempotency_key = "per_attempt",
}
