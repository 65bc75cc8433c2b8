-- profiles/langchain-openai.lua
return profile {
  name    = "langchain-openai",
  version = "@langchain/openai 1.4.7, @langchain/core 1.4.0",
  doc     = [[LangChain JS ChatOpenAI with its defaults: the OpenAI client it
              wraps is built with maxRetries 0 (so openai-node does not retry)
              and LangChain's AsyncCaller retries instead, maxRetries 6. Read
              from node_modules/@langchain/openai/dist/chat_models/base.js and
              node_modules/@langchain/core/dist/utils/async_caller.js
              (STATUS_NO_RETRY, classifyRateLimitError,
              defaultFailedAttemptHandler) and utils/p-retry (calculateDelay,
              onAttemptFailure). Not retried: 400-407, 409, 413, a 429
              insufficient_quota (or a quota message), a 429 without a
              Retry-After ("capacity") and a 429 whose Retry-After is over 60 s
              or does not parse. Everything else is retried, 408, 422 and 5xx
              included. The wait is 1 s x 2^(n-1) times a random factor in
              [1, 2) (randomize: true), no cap; after a 429 it is the longer of
              that and the Retry-After (seconds or an HTTP date; a past date
              counts as 0; retry-after-ms is not read, so a 429 carrying only that
              is "headerless" and not retried). A body cut short is retried,
              and so is a 200 whose body is not JSON: its SyntaxError has no
              status, so defaultFailedAttemptHandler lets it through (learned
              by fusebox learn, then checked with exec --profile over
              scenarios/shape/garbage_html.lua: 2 attempts). A 200 that is
              JSON but has no choices is not retried ("missing_fields" is
              left out): completionWithRetry returns it whole, and the
              TypeError reading choices[0].message comes after, outside the
              AsyncCaller (exec over scenarios/shape/missing_fields.lua: 1
              attempt). A broken stream is not retried, a cut inside a tool
              call's arguments with no text before it neither: the retry
              wraps only the create() call, the stream is read after it
              (exec over scenarios/tools/cut_mid_arguments.lua: 1 attempt).
              The OpenAI client's own timeout (10 min) bounds an attempt until
              its headers arrive. Checked on the wire over examples/interop
              with ChatOpenAI invoke / stream.]],
  dialect = "openai",

  max_attempts = 7,
  backoff = { base = 1, factor = 2, cap = false, jitter = "add", fraction = 1 },
  retries = { 408, "410-412", "414-428", "430-499", ">=500", "connection", "timeout", "body", "not_json",
              { status = 429, except = { "insufficient_quota" }, retry_after = "required" } },
  x_should_retry = false,
  retry_after = {
    honoured = true,
    forms    = { "seconds", "date" },
    cap      = 60,
    over_cap = "stop",
    invalid  = "stop",
    past     = "backoff",
    combine  = "max",
  },
  timeout = 600,
  timeout_covers = "headers",
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
