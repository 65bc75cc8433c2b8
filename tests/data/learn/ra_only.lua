return profile {
  name = "ra_only", version = "test", dialect = "openai",
  max_attempts = 4,
  timeout = 10, -- policy_client.py: urlopen(..., timeout=10)
  backoff = { base = 0.5, factor = 2 },
  retries = { 503, { status = 429, except = { "insufficient_quota" }, retry_after = "required" } },
  retry_after = { honoured = true, forms = { "seconds", "date" }, cap = 9, over_cap = "stop",
                  invalid = "stop", past = "backoff" },
  idempotency_key = false,
}
