-- scenarios/tools/rerun_after_retried_turn.lua
return scenario {
  name = "A retried turn carries the same tool call again",
  doc  = [[The stream carries the whole get_weather call (call_1), then is cut
           before its end. The retried turn answers the same call, with
           the same id. An agent that ran the call from the broken
           stream runs it again for the retry: the weather is looked up
           twice, and a tool with a side effect (send an email, charge a
           card) runs twice. A good client runs tool calls only from the
           answer it accepts, and keys each run by the call id so a
           repeat is replayed, not re-run.]],
  tags = { "tools", "stream", "effects" },

  provider = {
    stream { tool_calls = { { name = "get_weather", arguments = { city = "Paris" } } }, drop_after = 2 },
    stream { tool_calls = { { name = "get_weather", arguments = { city = "Paris" } } } },
  },

  client = { call = "stream_tools", deadline = 8, attempts = 3 },

  expect = {
    point = { "tool_integrity" },
    tool_integrity = true,
    outcome = "ok",
    within_deadline = true,
  },
}
