-- scenarios/storm/herd_429_burst.lua
--
-- The calls start evenly over 2 s (spread); the provider holds each first
-- attempt until t = 2.5 s and then rejects it, so every client meets the same
-- 429 at the same moment whatever its start time. Arrival n of the first wave
-- is the call that started at about (n-1) * 0.02 s.
return scenario {
  name = "A herd of 100 clients meets a 429 burst",
  doc  = [[A class starts: 100 users ask within 2 s, the provider queues them
           and at t = 2.5 s rejects the whole queue with 429 (no Retry-After).
           If every client waits the same fixed second, all 100 come back in
           the same instant and trip the limiter again: a thundering herd. A
           good client draws its backoff at random (full jitter), so the
           retries trickle back over a few seconds and every call succeeds.]],
  tags = { "storm", "herd", "jitter", "ratelimit" },

  provider = function(req)
    if req.attempt == 1 then
      local hold = math.max(0, 2.5 - (req.n - 1) * 0.02)
      return delay { hold, fail { status = 429, code = "rate_limit_exceeded", type = "requests",
                                  message = "Rate limit reached for requests per min (RPM)." } }
    end
    return chat { content = "hello, class" }
  end,

  client = { requests = 100, concurrency = 100, spread = 2, deadline = 12, attempts = 3,
             backoff = { base = 3, cap = 8, jitter = "full" },
             breaker = false, retry_budget = false },

  expect = {
    attempts = 2,
    outcome = "ok",
    herd = { window = 0.25, max = 30 },
    backoff = { jitter = true },
  },
}
