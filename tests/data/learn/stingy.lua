return profile {
  name = "stingy", version = "test", dialect = "openai",
  max_attempts = 2,
  timeout = 10, -- policy_client.py: urlopen(..., timeout=10)
  backoff = { base = 1 },
  retries = { 503, "connection" },
  retry_after = { honoured = false },
  idempotency_key = "per_call",
}
