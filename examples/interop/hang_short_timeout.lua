-- examples/interop/hang_short_timeout.lua
return scenario {
  name = "interop: a hang, with a 1 s client timeout",
  doc  = [[The provider never answers the first attempt. Run the client with
           CLIENT_TIMEOUT_MS=1000: it should give up on the attempt after 1 s
           and retry; the retry is answered at once. Without a timeout the
           client waits for ever (the Node SDKs' default is 10 minutes, curl
           has none).]],
  tags = { "interop", "deadline", "transient" },

  provider = {
    hang {},
    chat { content = "hello after the hang" },
  },
  -- fusebox exec exports it as FUSEBOX_ATTEMPT_TIMEOUT=1; the bundled
  -- clients use it as their per-attempt timeout.
  client = { attempt_timeout = 1 },

  expect = {
    outcome = "ok",
    max_requests = 2,
  },
}
