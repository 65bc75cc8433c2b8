-- Written by `fusebox import` from gemini_function_call.jsonl (json-lines) on 2024-05-01.
-- One step per recorded attempt; `delay` wrappers are the observed latencies.
-- Credentials were stripped. Edit freely.

return scenario {
  name = "Imported from gemini_function_call.jsonl",
  doc = [[Imported from gemini_function_call.jsonl on 2024-05-01: 1 attempt of 1 logical request (json-lines).
Each logical request replays its recorded steps in order: same statuses,
headers (Retry-After included) and latencies.]],
  tags = { "imported" },
  provider = {
    -- attempt 1 at +0 s (line 1): 200, gemini
    delay { 0.3, chat { model = "gemini-2.0-flash", usage = { input = 10, output = 9 }, tool_calls = { { id = "fc_1", name = "send_email", arguments = "{\"to\":\"c@example.com\"}" } } } },
  },
  -- Best practice for this incident (what any good client does);
  -- add attempts, outcome or a deadline for your own client's policy.
  expect = {
    tool_integrity = true,
    side_effects = true,
    max_requests = 8,
  },
}
