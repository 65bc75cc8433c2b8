-- scenarios/tools/responses_cut_mid_arguments.lua
return scenario {
  name = "Responses API: a stream cut in the middle of a tool call's arguments",
  doc  = [[The model calls get_weather and the stream carrying the arguments is cut
           after their first 8 bytes ('{"city":'). An agent that runs
           tool calls as soon as a stream shows them runs get_weather
           with arguments that are not even JSON. A good client runs
           nothing from a failed attempt: it retries the turn and runs
           the whole call once, keyed by its call id.]],
  tags = { "tools", "stream", "responses" },

  provider = {
    stream { tool_calls = { { name = "get_weather", arguments = { city = "Paris" } } }, drop_after = 1 },
    stream { tool_calls = { { name = "get_weather", arguments = { city = "Paris" } } } },
  },

  client = { call = "stream_tools", dialect = "responses", deadline = 8, attempts = 3 },

  expect = {
    point = { "tool_integrity" },
    tool_integrity = true,
    outcome = "ok",
    within_deadline = true,
  },
}
