-- tests/data/profiles/openai-node-7.lua: openai 7.59.0 as read from its client.mjs (retryRequest: a
-- Retry-After over 60 s, negative or not finite falls back to the backoff; 0 is slept as
-- asked), and checked on the wire (Node 20.20, though 7.x asks for Node >= 22):
--   fusebox exec --profile THIS scenarios/ratelimit/retry_after_{unparsable,negative,huge}.lua
--     -- node openai_chat.mjs   (with openai@7.59.0)   -> no profile failure;
-- with profiles/openai-node.lua (6.49.0) all three fail the profile verdict, gaps 462-542 ms.
-- A fixture for tests/cli/diff_policy.sh.
return profile {
  name    = "openai-node",
  version = "7.59.0",
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
    cap      = 60,
    over_cap = "backoff",
    invalid  = "backoff",
    past     = "backoff",
  },
  timeout = 600,
  timeout_covers = "whole",   -- 7.x: parseResponseWithTimeout bounds a body that is not streamed by
                              -- what is left of the timeout (a stream is not bounded after its head);
                              -- found by fusebox learn (tests/cli/learn_bump.sh), 6.49 clears it at the head
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
