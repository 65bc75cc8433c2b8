-- tests/data/import/record_upstream.lua: the upstream tests/cli/record_roundtrip.sh
-- records through `fusebox record`. One logical request per label k.
return scenario {
  name = "record upstream",
  provider = function(req)
    local k = req.body and req.body.k or "?"
    local n = req.attempt
    if k == "A" then
      if n == 1 then
        return fail { status = 429, code = "rate_limit_exceeded", retry_after = 1,
                      headers = { ["x-ratelimit-remaining-requests"] = "0" } }
      end
      return delay { 0.2, chat { content = "hello A" } }
    elseif k == "S" then
      return stream { chunks = { "streamed ", "through ", "the proxy" }, interval = 0.15 }
    elseif k == "R" then
      if n == 1 then return drop {} end
      if n == 2 then return fail { status = 503, retry_after = "Fri, 01 Jan 2100 00:00:00 GMT" } end
      return chat { content = "R at last" }
    end
    return hang {}
  end,
}
