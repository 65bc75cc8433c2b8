-- profiles/vercel-ai-sdk.lua
return profile {
  name    = "vercel-ai-sdk",
  version = "ai 6.0.325, @ai-sdk/provider-utils 4.0.65",
  doc     = [[The Vercel AI SDK (npm `ai`, generateText / streamText) with its
              defaults: maxRetries 2, no timeout. Read from
              node_modules/ai/dist/index.mjs (prepareRetries,
              retryWithExponentialBackoffRespectingRetryHeaders,
              getRetryDelayInMs) and node_modules/@ai-sdk/provider-utils
              (retryWithExponentialBackoffInternal, handleFetchError) and
              node_modules/@ai-sdk/provider (APICallError: isRetryable is
              408, 409, 429 or >= 500, and any network error). The waits are
              fixed: 2 s, then 4 s (initialDelayInMs 2000, backoffFactor 2, no
              jitter). A Retry-After (retry-after-ms first, then retry-after
              as seconds or an HTTP date) is waited out when it is >= 0 and
              under 60 s (or under the backoff); otherwise, and when it does
              not parse or lies in the past, the fixed wait applies.
              Retry-After: 0 is honoured as "at once", which `past` cannot say
              apart from a negative value. A 429 insufficient_quota is retried
              like any 429. A body cut below its Content-Length is a network error
              (isRetryable) and retried. A stream is retried only before it
              begins: retry() wraps doStream, the stream is read after it,
              and a cut one, even inside a tool call's arguments with no
              text before (scenarios/tools/cut_mid_arguments.lua), fails as
              an APICallError with status 200, not isRetryable. A 200 not
              JSON and a 200 JSON without its choices both fail as "Invalid
              JSON response" (status 200): neither is retried. Checked on the wire over examples/interop with
              generateText / streamText and @ai-sdk/openai's chat model.]],
  dialect = { "openai", "anthropic" },

  max_attempts = 3,
  backoff = { schedule = { 2, 4 } },
  retries = { 408, 409, 429, ">=500", "connection", "body" },
  x_should_retry = false,
  retry_after = {
    honoured = true,
    forms    = { "retry-after-ms", "seconds", "date" },
    cap      = 60,
    over_cap = "backoff",
    invalid  = "backoff",
    past     = "backoff",
  },
  timeout = false,
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
