-- profiles/groq-sdk.lua
return profile {
  name    = "groq-sdk",
  version = "1.6.0",
  doc     = [[Groq's TypeScript SDK (npm `groq-sdk`) with its defaults:
              maxRetries 2, timeout 60 s, requests to
              {GROQ_BASE_URL}/openai/v1/chat/completions. Its retry code is
              openai-node's (node_modules/groq-sdk/client.js: shouldRetry,
              retryRequest, calculateDefaultRetryTimeoutMillis): 408, 409,
              429, >= 500 and connection errors; retry-after-ms, then
              Retry-After as seconds or an HTTP-date, waited in full; else
              0.5 s x 2^n capped at 8 s minus up to 25 % jitter.]],
  dialect = "openai",
  example = "sh examples/interop_apis/client.sh groq-sdk",

  max_attempts = 3,
  backoff = { base = 0.5, factor = 2, cap = 8, jitter = "subtract", fraction = 0.25 },
  retries = { 408, 409, 429, ">=500", "connection", "timeout" },
  x_should_retry = true,
  retry_after = {
    honoured = true,
    forms    = { "retry-after-ms", "seconds", "date" },
    cap      = false,
    invalid  = "immediate",
    past     = "immediate",
  },
  timeout = 60,
  timeout_covers = "headers",
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
