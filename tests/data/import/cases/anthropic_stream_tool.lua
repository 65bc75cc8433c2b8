-- Written by `fusebox import` from anthropic_stream_tool.jsonl (json-lines) on 2024-05-01.
-- One step per recorded attempt; `delay` wrappers are the observed latencies.
-- Credentials were stripped. Edit freely.

return scenario {
  name = "Imported from anthropic_stream_tool.jsonl",
  doc = [[Imported from anthropic_stream_tool.jsonl on 2024-05-01: 1 attempt of 1 logical request (json-lines).
Each logical request replays its recorded steps in order: same statuses,
headers (Retry-After included) and latencies.]],
  tags = { "imported" },
  provider = {
    -- attempt 1 at +0 s (line 1): 200, anthropic
    delay { 0.12, stream { chunks = { "Sending ", "it now." }, tool_calls = { { id = "toolu_01A", name = "send_email", arguments = "{\"subject\":\"Order 1042\",\"to\":\"c@example.com\"}" } }, interval = 0.057, model = "claude-3-5-haiku", usage = { input = 26, output = 18 } } },
  },
  -- Best practice for this incident (what any good client does);
  -- add attempts, outcome or a deadline for your own client's policy.
  expect = {
    tool_integrity = true,
    side_effects = true,
    max_requests = 8,
  },
}
