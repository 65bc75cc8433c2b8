-- Written by `fusebox import` from responses_function_call.jsonl (json-lines) on 2024-05-01.
-- One step per recorded attempt; `delay` wrappers are the observed latencies.
-- Credentials were stripped. Edit freely.

return scenario {
  name = "Imported from responses_function_call.jsonl",
  doc = [[Imported from responses_function_call.jsonl on 2024-05-01: 2 attempts of 1 logical request (json-lines).
Each logical request replays its recorded steps in order: same statuses,
headers (Retry-After included) and latencies.]],
  tags = { "imported" },
  provider = {
    -- attempt 1 at +0 s (line 1): 200, openai-responses
    delay { 0.2, chat { content = "On it.", model = "gpt-4o-mini", usage = { input = 9, output = 11 }, tool_calls = { { id = "call_R1", name = "send_email", arguments = "{\"to\":\"c@example.com\"}" } } } },
    -- attempt 2 at +1.5 s (line 2): 200, openai-responses
    delay { 0.09, stream { tool_calls = { { id = "call_R2", name = "send_email", arguments = "{\"to\":\"c@example.com\"}" } }, interval = 0.155, model = "gpt-4o-mini", usage = { input = 13, output = 8 } } },
  },
  -- Best practice for this incident (what any good client does);
  -- add attempts, outcome or a deadline for your own client's policy.
  expect = {
    tool_integrity = true,
    side_effects = true,
    max_requests = 12,
  },
}
