-- profiles/aws-bedrock-runtime.lua
return profile {
  name    = "aws-bedrock-runtime",
  version = "3.1164.0",
  doc     = [[Amazon's Bedrock Runtime client (npm @aws-sdk/client-bedrock-
              runtime) with its defaults (retryMode standard, maxAttempts 3)
              and one change: requestHandler is @smithy/node-http-handler's
              NodeHttpHandler (HTTP/1.1; the default NodeHttp2Handler speaks
              HTTP/2, which fusebox does not serve yet). Calls
              {endpoint}/model/{modelId}/converse and /converse-stream
              (InvokeModel: /invoke, /invoke-with-response-stream). Read
              from node_modules/@smithy/core/dist-cjs/submodules/retry/
              index.js (StandardRetryStrategy, isThrottlingError,
              isTransientError, DefaultRetryBackoffStrategy, Retry): retried
              are throttling errors (status 429, ThrottlingException and 13
              other names, ModelNotReadyException by its retryable trait) and
              transient ones (500, 502, 503, 504, ECONNRESET, ECONNREFUSED,
              EPIPE, ETIMEDOUT, TimeoutError); not 408 (ModelTimeoutException),
              400, 403 or another 5xx. The wait is full jitter,
              random x min(base x 2^n, 20 s), base 50 ms for transient errors
              (so under 50 ms, then 100 ms) and 1 s for
              throttling ones (under 1 s, then 2 s); written below as the
              wider window, base 1 s, which holds both. A Retry-After (whole or
              decimal seconds, or an HTTP-date; also x-amz-retry-after in
              ms) gives max(backoff, min(its wait, backoff + 5 s)): honoured
              up to about 5 s, which this file's words cannot say (cap =
              false). A retry also costs the client's retry quota (500
              tokens, 14 a retry, 5 a throttled one): a long storm stops
              retrying. A stream broken after its 200 (an exception message)
              is not retried. No timeout by default. Checked on the wire with
              examples/clients/node/bedrock_chat.mjs against scenarios/bedrock/
              (docs/apis.md).]],
  dialect = { "bedrock-converse", "bedrock-invoke" },
  example = "node examples/clients/node/bedrock_chat.mjs",

  max_attempts = 3,
  backoff = { base = 1, factor = 2, cap = 20, jitter = "full" },
  retries = { 429, 500, 502, 503, 504, "connection" },
  retry_after = {
    honoured = true,
    forms    = { "seconds", "date" },
    cap      = false,
    invalid  = "backoff",
    past     = "backoff",
    combine  = "max",
  },
  timeout = false,
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
