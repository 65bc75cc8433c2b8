-- Written by `fusebox import` from trace_stream_tool.jsonl (trace) on 2024-05-01.
-- One step per recorded attempt; `delay` wrappers are the observed latencies.
-- Credentials were stripped. Edit freely.

return scenario {
  name = "Imported from trace_stream_tool.jsonl",
  doc = [[Imported from trace_stream_tool.jsonl on 2024-05-01: 2 attempts of 1 logical request (trace).
Each logical request replays its recorded steps in order: same statuses,
headers (Retry-After included) and latencies.]],
  tags = { "imported" },
  provider = {
    -- attempt 1 at +0 s (line 2): id 1: stream 200 dropped, openai-chat
    stream { tool_calls = { { id = "call_1", name = "get_weather", arguments = "{\"city\":\"Paris\"}" } }, drop_after = 2, usage = { input = 23, output = 7 } },
    -- attempt 2 at +0.013 s (line 4): id 2: stream 200 complete, openai-chat
    stream { tool_calls = { { id = "call_1", name = "get_weather", arguments = "{\"city\":\"Paris\"}" } }, usage = { input = 23, output = 7 } },
  },
  -- Best practice for this incident (what any good client does);
  -- add attempts, outcome or a deadline for your own client's policy.
  expect = {
    tool_integrity = true,
    side_effects = true,
    max_requests = 8,
  },
}
