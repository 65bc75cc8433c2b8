-- profiles/ollama-js.lua
return profile {
  name    = "ollama-js",
  version = "0.6.4",
  doc     = [[The Ollama JavaScript library (npm `ollama`) with its defaults,
              calling {host}/api/chat and /api/generate (host: the `host`
              option, default http://127.0.0.1:11434; the package reads no
              environment variable for it). It has no retry and no timeout:
              node_modules/ollama/dist/browser.mjs `post` makes one fetch and
              `checkOk` turns any non-2xx into a ResponseError (its `error`
              field, else "Error STATUS: TEXT"; `status_code` holds the
              status), so a 503 or 429 ends the call at once, whatever its
              Retry-After. A stream (NDJSON, parseJSON) that ends without a
              done:true line throws "Did not receive done or success response
              in stream."; an {"error": ...} line inside it throws
              Error(message). Checked on the wire with
              examples/clients/node/ollama_chat.mjs against scenarios/ollama/
              (docs/apis.md).]],
  dialect = { "ollama-chat", "ollama-generate" },
  example = "node examples/clients/node/ollama_chat.mjs",

  max_attempts = 1,
  retries = {},
  retry_after = { honoured = false },
  timeout = false,
  deadline = false,
  streams_retried = false,
  idempotency_key = false,
}
