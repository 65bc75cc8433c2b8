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
              It reads Retry-After as a whole number (a decimal is cut at the
              point, a negative one or 0 means none) or else a date, whose
              time left may be negative. Checked on the wire
              (examples/interop/FINDINGS.md): Retry-After 2.5 waited 2.3 s,
              1.5 1.2 s, 0.75 1.2 s, -5 1.3 s, 0 1.5 s; a date 5 s past never
              retried.]],
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
    decimal  = "truncate",   -- whole seconds only: 2.5 waits 2 s; 0.75 is a 0, below
    negative = "backoff",    -- -5 or 0 is no Retry-After to curl: its 1 s backoff
    past     = "hang",       -- "Will retry in -29 seconds", then no retry at all
  },
  timeout = false,           -- none unless the script passes --max-time
  timeout_covers = "whole",  -- --max-time bounds the whole transfer
  deadline = false,          -- none unless --retry-max-time
  streams_retried = false,
  idempotency_key = false,
}
