-- scenarios/ratelimit/retry_after_decimal.lua
return scenario {
  name = "Retry-After: 1.5 (decimal seconds) is honoured",
  doc  = [[HTTP defines Retry-After as whole seconds, but some providers and
           gateways send decimals ("Retry-After: 1.5"). A parser that accepts
           only digits throws the value away (and retries at once); one that
           truncates waits 1 s. A good client reads 1.5 s, waits at least that
           long and succeeds on the retry.]],
  tags = { "ratelimit", "retry-after", "transient" },

  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after = 1.5 },
    chat { content = "hello" },
  },

  client = { deadline = 8, attempts = 3 },

  expect = {
    point = { "retry_after_honoured" },
    attempts = 2,
    retry_after_honoured = true,
    outcome = "ok",
    within_deadline = true,
  },
}
