return profile {
  name = "wrapper", version = "test", dialect = "openai",
  max_attempts = 3,
  timeout = 10, -- policy_client.py: urlopen(..., timeout=10)
  backoff = { base = 1, factor = 1 },
  retries = { 400, 401, 403, 404, 408, 409, 410, 413, 422, 429, 451, ">=500", "connection", "body", "shape" },
  retry_after = { honoured = false },
  idempotency_key = false,
}
