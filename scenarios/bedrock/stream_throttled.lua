-- scenarios/bedrock/stream_throttled.lua
return scenario {
  name = "Bedrock ConverseStream broken by a throttlingException",
  doc  = [[The event stream starts (messageStart, two contentBlockDeltas), then
           an exception message (:message-type exception, :exception-type
           throttlingException) ends it. The answer failed: a good client
           treats it as a failure (and may retry the call), never returns the
           partial text.]],
  tags = { "bedrock", "stream", "error_event" },

  provider = {
    stream { content = "the first half of an answer", error_after = 2,
             error = { status = 429, message = "Too many tokens, please wait before trying again." } },
    stream { content = "hello from bedrock" },
  },

  client = { dialect = "bedrock", call = "stream", deadline = 8, attempts = 3 },

  expect = {
    point = { "no_stream_splice" },
    attempts = 2,
    outcome = "ok",
    no_stream_splice = true,
  },
}
