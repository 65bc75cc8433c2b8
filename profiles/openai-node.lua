-- profiles/openai-node.lua
return profile {
  name    = "openai-node",
  version = "6.49.0",
  doc     = [[The official OpenAI TypeScript/JavaScript SDK (npm `openai`) with
              its defaults: maxRetries 2, timeout 10 min. Read from
              node_modules/openai/client.mjs (makeRequest, shouldRetry,
              retryRequest, calculateDefaultRetryTimeoutMillis) and checked on
              the wire (examples/interop/FINDINGS.md).]],
  dialect = "openai",
  example = "sh examples/interop/client.sh openai-node",

  max_attempts = 3,
  backoff = { base = 0.5, factor = 2, cap = 8, jitter = "subtract", fraction = 0.25 },
  retries = { 408, 409, 429, ">=500", "connection", "timeout" },
  x_should_retry = true,
  retry_after = {
    honoured = true,
    forms    = { "retry-after-ms", "seconds", "date" },
    cap      = false,        -- no cap: Retry-After: 61 is waited out in full
    invalid  = "immediate",  -- an unparseable value sleeps NaN ms: retried at once
    past     = "immediate",  -- a date in the past sleeps a negative time: at once
  },
  timeout = 600,
  timeout_covers = "headers",
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
