-- profiles/cohere-ai.lua
return profile {
  name    = "cohere-ai",
  version = "8.1.0",
  doc     = [[Cohere's TypeScript SDK (npm `cohere-ai`, CohereClientV2) with its
              defaults, calling {baseUrl}/v2/chat (chat and chatStream). Read
              from node_modules/cohere-ai/core/fetcher/requestWithRetries.js
              and Fetcher.js: maxRetries 2 (3 attempts); a response with
              status 408, 429 or >= 500 is retried, nothing else (a refused,
              reset or timed-out request throws out of the retry loop and is
              never retried; a stream that breaks after its 200 is not
              either). The wait: Retry-After as whole seconds (parseInt, > 0),
              else as an HTTP-date in the future, both cut to 60 s; else
              X-RateLimit-Reset (epoch seconds); else 1 s x 2^n with
              symmetric jitter of +-10 % (0.9-1.1 s, then 1.8-2.2 s: written
              here as base 0.9 with "add" jitter of 0.2/0.9). A zero, past or
              unparseable Retry-After falls back to that backoff. A decimal
              one is cut to its whole seconds (parseInt: Retry-After: 1.5
              waits 1 s; the profile fails there, as the SDK does). A
              Retry-After over 60 s is waited for 60 s, which this file's
              words cannot say (cap = false: judged as honoured in full).
              Timeout 300 s per attempt (timeoutInSeconds). Checked on the
              wire with examples/clients/node/cohere_chat.mjs against
              scenarios/cohere/ (docs/apis.md).]],
  dialect = "cohere",
  example = "node examples/clients/node/cohere_chat.mjs",

  max_attempts = 3,
  backoff = { base = 0.9, factor = 2, cap = 60, jitter = "add", fraction = 0.2223 },
  retries = { 408, 429, ">=500" },
  retry_after = {
    honoured = true,
    forms    = { "seconds", "date" },
    cap      = false,
    invalid  = "backoff",
    past     = "backoff",
  },
  timeout = 300,
  timeout_covers = "whole",
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
