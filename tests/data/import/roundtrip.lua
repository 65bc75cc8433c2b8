-- tests/data/import/roundtrip.lua: the scenario tests/cli/import_roundtrip.sh
-- serves, imports from its trace, and serves again. One logical request per
-- label k (the request body's "k"), each going through several fault kinds.
return scenario {
  name = "import round trip: many fault kinds",
  provider = function(req)
    local k = req.body and req.body.k or "?"
    local n = req.attempt
    if k == "A" then
      if n == 1 then
        return fail { status = 429, code = "rate_limit_exceeded", retry_after = 1,
                      headers = { ["x-ratelimit-remaining-requests"] = "0" } }
      end
      if n == 2 then return fail { status = 503, retry_after_ms = 200, retry_after_date = 2 } end
      return delay { 0.3, chat { content = "hello A" } }
    elseif k == "B" then
      if n == 1 then return drop {} end
      if n == 2 then return reset {} end
      if n == 3 then
        return truncate { chat { content = "a long enough answer" }, at = 25, mode = "early-close" }
      end
      if n == 4 then return truncate { fail { status = 500 }, at = 10 } end
      return chat { content = "B at last" }
    elseif k == "C" then
      if n == 1 then
        return stream { chunks = { "one ", "two ", "three" }, interval = 0.1, drop_after = 2 }
      end
      return stream { chunks = { "one ", "two ", "three" }, interval = 0.05 }
    elseif k == "D" then
      if n == 1 then return hang {} end
      return garbage {}
    elseif k == "E" then
      if n == 1 then return fail { status = 529 } end
      return chat { content = "hi E" }
    elseif k == "F" then
      if n == 1 then return fail { status = 429, retry_after = "soon" } end
      return delay { 0.2, drop {} }
    end
    return chat {}
  end,
  effects = {
    effect { apply = true, respond = "drop" },
    effect { apply = true },
  },
}
