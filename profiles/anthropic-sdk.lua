-- profiles/anthropic-sdk.lua
return profile {
  name    = "anthropic-sdk",
  version = "1.14.0",
  doc     = [[The official Anthropic TypeScript SDK (npm `@anthropic-ai/sdk`)
              with its defaults: maxRetries 2, timeout 10 min (non-streaming
              calls with a large max_tokens get more, up to 60 min, or are
              refused). Read from node_modules/@anthropic-ai/sdk/client.mjs
              (makeRequest, shouldRetry, retryRequest) and checked on the wire
              (examples/interop/FINDINGS.md). Same policy as openai-node except
              for odd Retry-After values.]],
  dialect = "anthropic",
  example = "sh examples/interop/client.sh anthropic-sdk",

  max_attempts = 3,
  backoff = { base = 0.5, factor = 2, cap = 8, jitter = "subtract", fraction = 0.25 },
  retries = { 408, 409, 429, ">=500", "connection", "timeout" },
  x_should_retry = true,
  retry_after = {
    honoured = true,
    forms    = { "retry-after-ms", "seconds", "date" },
    cap      = 2147483.647,  -- 2^31-1 ms, what one timer can hold: ~24.8 days
    over_cap = "backoff",
    invalid  = "backoff",
    past     = "backoff",
  },
  timeout = 600,
  timeout_covers = "headers",
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
