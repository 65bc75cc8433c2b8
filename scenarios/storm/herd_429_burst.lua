-- scenarios/storm/herd_429_burst.lua
--
-- The calls start evenly over 8 s (spread); the provider holds each first
-- attempt until t = 9 s (req.t, scenario time) and then rejects it, so every
-- client meets the same 429 at the same moment whatever its start time or
-- the machine's load (and before any client's own 10 s attempt timeout). The
-- first wave is spread (about 25 per 2 s window) so it never looks like a
-- herd itself; the retries decide the verdict.
return scenario {
  name = "A herd of 100 clients meets a 429 burst",
  doc  = [[A class starts: 100 users ask within 8 s, the provider queues them
           and at t = 9 s rejects the whole queue with 429 (no Retry-After).
           If every client waits the same fixed second, all 100 come back in
           the same instant and trip the limiter again: a thundering herd. A
           good client draws its backoff at random (full jitter), so the
           retries trickle back over a few seconds and every call succeeds.]],
  tags = { "storm", "herd", "jitter", "ratelimit" },

  provider = function(req)
    if req.attempt == 1 then
      local hold = math.max(0, 9 - req.t)
      return delay { hold, fail { status = 429, code = "rate_limit_exceeded", type = "requests",
                                  message = "Rate limit reached for requests per min (RPM)." } }
    end
    return chat { content = "hello, class" }
  end,

  client = { requests = 100, concurrency = 100, spread = 8, deadline = 30, attempts = 2,
             backoff = { base = 8, cap = 8, jitter = "full" },
             breaker = false, retry_budget = false },

  expect = {
    point = { "herd" },
    attempts = 2,
    outcome = "ok",
    herd = { window = 2, max = 55 },  -- full jitter over 8 s: about 25 a window, peaks in the 30s; a herd: all 100
  },
}
