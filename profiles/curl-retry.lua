-- profiles/curl-retry.lua
return profile {
  name    = "curl-retry",
  version = "7.88.1 (Debian 12)",
  doc     = [[curl -sS --fail --retry 3, as a typical shell script has it (no
              --retry-all-errors, no --retry-connrefused, no --max-time):
              examples/clients/curl/chat.sh. curl retries only what it calls
              transient: a timeout and HTTP 408, 429, 500, 502, 503, 504; not
              409, not 529, not an empty reply or a reset. Its wait starts at
              1 s and doubles up to 10 min, unless Retry-After says otherwise.
              Checked on the wire (examples/interop/FINDINGS.md).]],
  dialect = "openai",
  example = "sh examples/interop/client.sh curl-retry",

  max_attempts = 4,
  backoff = { base = 1, factor = 2, cap = 600, jitter = "none" },
  retries = { 408, 429, 500, 502, 503, 504, "timeout" },
  x_should_retry = false,
  retry_after = {
    honoured = true,
    forms    = { "seconds", "date" },
    cap      = false,
    invalid  = "backoff",
    past     = "hang",       -- "Will retry in -29 seconds", then no retry at all
  },
  timeout = false,           -- none unless the script passes --max-time
  timeout_covers = "whole",  -- --max-time bounds the whole transfer
  deadline = false,          -- none unless --retry-max-time
  streams_retried = false,
  idempotency_key = false,
}
