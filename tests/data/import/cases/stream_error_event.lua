-- Written by `fusebox import` from stream_error_event.jsonl (json-lines) on 2024-05-01.
-- One step per recorded attempt; `delay` wrappers are the observed latencies.
-- Credentials were stripped. Edit freely.

return scenario {
  name = "Imported from stream_error_event.jsonl",
  doc = [[Imported from stream_error_event.jsonl on 2024-05-01: 1 attempt of 1 logical request (json-lines).
Each logical request replays its recorded steps in order: same statuses,
headers (Retry-After included) and latencies.]],
  tags = { "imported" },
  provider = {
    -- attempt 1 at +0 s (line 1): 200, openai-chat
    delay { 0.08, stream { chunks = { "The report ", "says " }, interval = 0.2, error_after = 2, error = { type = "server_error", code = "server_error", message = "The server had an error while processing your request" }, model = "gpt-4o-mini" } },
  },
  -- Best practice for this incident (what any good client does);
  -- add attempts, outcome or a deadline for your own client's policy.
  expect = {
    max_requests = 4,
  },
}
