-- scenarios/examples/function_provider.lua
return scenario {
  name = "A provider written as a function",
  doc  = [[Instead of a fixed list of steps, the provider is a Lua function
           that looks at each request and returns a step. Here: requests that
           ask for a stream get one; the first attempt of any request is
           rate limited for 1 s; a request for an unknown model gets a 404.
           `req` also has n, path, dialect, headers, body and t.]],
  tags = { "example", "function", "ratelimit" },

  provider = function(req)
    local model = req.body and req.body.model or "gpt-4o-mini"
    if model == "no-such-model" then
      return fail { status = 404, code = "model_not_found",
                    message = "The model '" .. model .. "' does not exist." }
    end
    if req.attempt == 1 then
      return fail { status = 429, code = "rate_limit_exceeded", retry_after = 1 }
    end
    if req.stream then
      return stream { chunks = { "streamed ", "reply" }, interval = 0.05, model = model }
    end
    return chat { content = "reply on attempt " .. req.attempt, model = model }
  end,

  client = { deadline = 8, attempts = 3 },

  expect = {
    point = { "retry_after_honoured" },
    attempts = 2,
    retry_after_honoured = true,
    outcome = "ok",
  },
}
