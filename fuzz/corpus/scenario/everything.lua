-- every table a scenario may carry, and a provider that uses req
return scenario {
  name = "everything",
  doc = "docs",
  tags = { "a", "b" },
  providers = {
    { name = "primary", fn = function(req)
        local n = 0
        for k, v in pairs(req.headers) do n = n + #k + #tostring(v) end
        if req.attempt == 1 then
          return delay { seconds = 0.1, step = fail { status = 429, code = "rate_limit_exceeded",
                         retry_after = 1.5, headers = { ["x-n"] = tostring(n) } } }
        elseif req.attempt == 2 then
          return truncate { step = chat { content = string.rep("é", 40) }, at = 17, mode = "early-close" }
        end
        return stream { chunks = { "a", "\0b", "\"c\"" }, interval = 0, error_after = 2,
                        usage = { input = 3, output = 4 } }
      end },
    { name = "backup", garbage { body = "<html>" }, reset {}, drop {}, hang {},
      fail { status = 503, retry_after_date = 2, retry_after_ms = 10 },
      stream { content = "x y z", drop_after = 1, stall_after = 0, stall = -1, no_end = true } },
  },
  effects = { effect { apply = true, respond = "drop" }, effect { apply = false } },
  idempotency = "ignored",
  ledger = "down",
  ratelimit = { rpm = 2, tpm = 100, burst = 1 },
  client = { deadline = 8, attempts = 3, chain = { "primary", "backup" } },
  expect = { attempts = { min = 1, max = 3 }, outcome = { "ok", "degraded" },
             backoff = { min_gap = 0.1, growth = true }, side_effects = { at_most_once = true } },
}
