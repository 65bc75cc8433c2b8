-- profiles/google-genai.lua
return profile {
  name    = "google-genai",
  version = "2.32.0",
  doc     = [[Google's Gen AI SDK for TypeScript (npm `@google/genai`) with its
              defaults, calling {GOOGLE_GEMINI_BASE_URL}/v1beta/models/
              {model}:generateContent (and :streamGenerateContent?alt=sse).
              It retries only when httpOptions.retryOptions is given
              (node_modules/@google/genai/dist/node/index.mjs, apiCall: no
              retryOptions -> one fetch); by default every failure, a 429
              with RetryInfo included, ends the call with an ApiError. No
              client-side timeout by default.]],
  dialect = "gemini",
  example = "sh examples/interop_apis/client.sh google-genai",

  max_attempts = 1,
  retries = {},
  retry_after = { honoured = false },
  timeout = false,
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
