-- Written by `fusebox import` from peak.har (har) on 2024-05-01.
-- One step per recorded attempt; `delay` wrappers are the observed latencies.
-- Credentials were stripped. Edit freely.

return scenario {
  name = "Imported from peak.har",
  doc = [[Imported from peak.har on 2024-05-01: 4 attempts of 1 logical request (har).
Each logical request replays its recorded steps in order: same statuses,
headers (Retry-After included) and latencies.]],
  tags = { "imported" },
  provider = {
    -- attempt 1 at +0 s (entry 1): POST /v1/chat/completions: 429, request req_peak_1, openai-chat
    delay { 0.14, fail { status = 429, code = "rate_limit_exceeded", type = "requests", message = "Rate limit reached for gpt-4o-mini in organization org-[redacted] on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 30s.", retry_after = 30, headers = { ["x-ratelimit-remaining-requests"] = "0" } } },
    -- attempt 2 at +0.18 s (entry 2): POST /v1/chat/completions: 429, request req_peak_1, openai-chat
    delay { 0.12, fail { status = 429, code = "rate_limit_exceeded", type = "requests", message = "Rate limit reached for gpt-4o-mini in organization org-[redacted] on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 30s.", retry_after = 30, headers = { ["x-ratelimit-remaining-requests"] = "0" } } },
    -- attempt 3 at +0.185 s (entry 3): POST /v1/chat/completions: 200, request req_peak_3, openai-chat
    delay { 0.64, chat { model = "gpt-4o-mini-2024-07-18", usage = { input = 61, output = 24 }, tool_calls = { { id = "call_peak_1", name = "send_email", arguments = "{\"to\":\"customer@example.com\",\"subject\":\"Order 1042 confirmed\"}" } } } },
    -- attempt 4 at +0.19 s (entry 4): POST /v1/chat/completions: 200, request req_peak_3, openai-chat
    delay { 0.7, chat { model = "gpt-4o-mini-2024-07-18", usage = { input = 61, output = 24 }, tool_calls = { { id = "call_peak_1", name = "send_email", arguments = "{\"to\":\"customer@example.com\",\"subject\":\"Order 1042 confirmed\"}" } } } },
  },
  -- Best practice for this incident (what any good client does);
  -- add attempts, outcome or a deadline for your own client's policy.
  expect = {
    retry_after_honoured = true,
    tool_integrity = true,
    side_effects = true,
    max_requests = 8,
  },
}
