-- profiles/check.lua - the reference loader of client profiles.
--
--   lua5.4 profiles/check.lua profiles/*.lua     (skips itself)
--
-- Loads each file in a sandbox that has only a `profile` global (as
-- `fusebox exec` will), checks every key against profiles/README.md and
-- prints "ok FILE (name version)" or "FILE: message". Exit 0 when all load.
-- The rules here are the format's specification in executable form.

local KINDS = { connection = true, timeout = true, body = true,
                stream_error = true, shape = true }
local JITTERS = { none = true, full = true, equal = true, subtract = true }
local FORMS = { ["retry-after-ms"] = true, seconds = true, date = true }
local FALLBACKS = { backoff = true, immediate = true, stop = true, hang = true }
local COVERS = { headers = true, idle = true, whole = true }
local DIALECTS = { openai = true, anthropic = true }

local function fail(fmt, ...) error(string.format(fmt, ...), 0) end

local function keys(t, allowed, where)
  for k in pairs(t) do
    if not allowed[k] then fail("%s: unknown key '%s'", where, tostring(k)) end
  end
end

local function num(v, where, min)
  if type(v) ~= "number" or v ~= v or v < (min or 0) then
    fail("%s: expected a number >= %g", where, min or 0)
  end
end

local function num_or_false(v, where)
  if v ~= false then num(v, where) end
end

local function bool(v, where)
  if type(v) ~= "boolean" then fail("%s: expected true or false", where) end
end

local function oneof(v, set, where)
  if set[v] == nil then fail("%s: unexpected value '%s'", where, tostring(v)) end
end

local function list(v, where)
  if type(v) ~= "table" or #v == 0 then fail("%s: expected a non-empty list", where) end
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 or k > #v then fail("%s: expected a list", where) end
  end
end

-- A retry condition: a status (404), a range (">=500", "500-599") or a kind.
local function condition(c, where)
  if math.type(c) == "integer" then
    if c < 100 or c > 599 then fail("%s: status %d out of range", where, c) end
    return
  end
  if type(c) ~= "string" then fail("%s: expected a status, a range or a kind", where) end
  if KINDS[c] then return end
  local lo = c:match("^>=(%d%d%d)$")
  if lo then return end
  local a, b = c:match("^(%d%d%d)%-(%d%d%d)$")
  if a and tonumber(a) <= tonumber(b) then return end
  fail("%s: '%s' is not a status, a range ('>=500', '500-599') or a kind " ..
       "(connection, timeout, body, stream_error, shape)", where, c)
end

local function check(p)
  if type(p) ~= "table" then fail("profile: expected a table") end
  keys(p, { name = 1, version = 1, doc = 1, dialect = 1, example = 1,
            max_attempts = 1, backoff = 1, retries = 1, x_should_retry = 1,
            retry_after = 1, timeout = 1, timeout_covers = 1, deadline = 1,
            streams_retried = 1, idempotency_key = 1 }, "profile")
  for _, k in ipairs({ "name", "version", "max_attempts", "retries", "retry_after" }) do
    if p[k] == nil then fail("profile: '%s' is required", k) end
  end
  if type(p.name) ~= "string" or not p.name:match("^[%w_.-]+$") then
    fail("name: expected a word (letters, digits, '.', '_', '-')")
  end
  if type(p.version) ~= "string" then fail("version: expected a string") end
  if p.doc ~= nil and type(p.doc) ~= "string" then fail("doc: expected a string") end
  if p.example ~= nil and type(p.example) ~= "string" then fail("example: expected a string") end
  if p.dialect ~= nil then
    if type(p.dialect) == "table" then
      list(p.dialect, "dialect")
      for i, d in ipairs(p.dialect) do oneof(d, DIALECTS, "dialect[" .. i .. "]") end
    else
      oneof(p.dialect, DIALECTS, "dialect")
    end
  end
  if math.type(p.max_attempts) ~= "integer" or p.max_attempts < 1 then
    fail("max_attempts: expected an integer >= 1 (attempts in all, the first included)")
  end
  if p.backoff ~= nil then
    local b = p.backoff
    if type(b) ~= "table" then fail("backoff: expected a table") end
    keys(b, { base = 1, factor = 1, cap = 1, jitter = 1, fraction = 1 }, "backoff")
    num(b.base, "backoff.base")
    if b.factor ~= nil then num(b.factor, "backoff.factor", 1) end
    if b.cap ~= nil then num_or_false(b.cap, "backoff.cap") end
    oneof(b.jitter or "none", JITTERS, "backoff.jitter")
    if b.jitter == "subtract" then
      num(b.fraction, "backoff.fraction")
      if b.fraction > 1 then fail("backoff.fraction: expected 0..1") end
    elseif b.fraction ~= nil then
      fail("backoff.fraction: only with jitter = \"subtract\"")
    end
  elseif p.max_attempts > 1 then
    fail("backoff: required when max_attempts > 1")
  end
  list(p.retries, "retries")
  for i, c in ipairs(p.retries) do condition(c, "retries[" .. i .. "]") end
  if p.x_should_retry ~= nil then bool(p.x_should_retry, "x_should_retry") end
  local ra = p.retry_after
  if type(ra) ~= "table" then fail("retry_after: expected a table") end
  keys(ra, { honoured = 1, forms = 1, cap = 1, over_cap = 1, invalid = 1, past = 1 },
       "retry_after")
  bool(ra.honoured, "retry_after.honoured")
  if ra.honoured then
    list(ra.forms, "retry_after.forms")
    for i, f in ipairs(ra.forms) do oneof(f, FORMS, "retry_after.forms[" .. i .. "]") end
    if ra.cap ~= nil then num_or_false(ra.cap, "retry_after.cap") end
    if ra.over_cap ~= nil then
      if not ra.cap then fail("retry_after.over_cap: only with a cap") end
      oneof(ra.over_cap, FALLBACKS, "retry_after.over_cap")
    end
    if ra.invalid ~= nil then oneof(ra.invalid, FALLBACKS, "retry_after.invalid") end
    if ra.past ~= nil then oneof(ra.past, FALLBACKS, "retry_after.past") end
  else
    for _, k in ipairs({ "forms", "cap", "over_cap", "invalid", "past" }) do
      if ra[k] ~= nil then fail("retry_after.%s: only when honoured = true", k) end
    end
  end
  if p.timeout ~= nil then num_or_false(p.timeout, "timeout") end
  if p.timeout_covers ~= nil then oneof(p.timeout_covers, COVERS, "timeout_covers") end
  if p.deadline ~= nil then num_or_false(p.deadline, "deadline") end
  if p.streams_retried ~= nil then bool(p.streams_retried, "streams_retried") end
  local ik = p.idempotency_key
  if ik ~= nil and ik ~= false and ik ~= "per_call" and ik ~= "per_attempt" then
    fail("idempotency_key: expected false, \"per_call\" or \"per_attempt\"")
  end
  return p
end

local function load_profile(path)
  local f, err = io.open(path, "r")
  if not f then return nil, err end
  local src = f:read("a")
  f:close()
  local env = { profile = check }
  local chunk, lerr = load(src, "@" .. path, "t", env)
  if not chunk then return nil, lerr end
  local ok, res = pcall(chunk)
  if not ok then return nil, path .. ": " .. tostring(res) end
  if type(res) ~= "table" then return nil, path .. ": must return profile { ... }" end
  return res
end

local bad = 0
if #arg == 0 then
  io.stderr:write("usage: lua5.4 profiles/check.lua PROFILE.lua...\n")
  os.exit(2)
end
for _, path in ipairs(arg) do
  if path:match("check%.lua$") then goto continue end  -- this file, from a glob
  local p, err = load_profile(path)
  if p then
    print(string.format("ok  %s  (%s %s)", path, p.name, p.version))
  else
    print(err)
    bad = bad + 1
  end
  ::continue::
end
os.exit(bad == 0 and 0 or 1)
