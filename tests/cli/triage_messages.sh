#!/usr/bin/env bash
# Issue 24: what a person needs to find *why* a run is red, in the first
# line they read. Each case pins one message or one option form:
#   stopped      the guarded client's reason for giving up (a Retry-After of
#                30 s meets max_wait 30 s) is in the terminal line, the JSON,
#                the JUnit and the HTML report
#   fial         a misspelt step is "file:line: unknown step 'fial' (did you
#                mean 'fail'?)", not Lua's "attempt to call a nil value"
#   honored      expect.retry_after_honored (US spelling) suggests
#                'retry_after_honoured'
#   runtime      a provider function's runtime error makes `run` exit 2 and
#                name file:line (a broken scenario is no client regression)
. "$(dirname "$0")/lib.sh"
need_fusebox

# --- stopped: max total wait -------------------------------------------
cat > "$tmp/max_wait.lua" <<'LUA'
return scenario {
  name = "Retry-After 30 s meets max_wait 30 s",
  provider = {
    fail { status = 429, code = "rate_limit_exceeded", retry_after = 30 },
    chat { content = "hello" },
  },
  client = { deadline = 60, attempts = 3, max_wait = 30 },
  expect = { outcome = "ok" },
}
LUA
out=$("$bin" run "$tmp/max_wait.lua" --json "$tmp/mw.json" --junit "$tmp/mw.xml" \
      --html "$tmp/mw.html" 2>&1)
rc=$?
[ "$rc" = 1 ] && ok || bad "stopped: exit $rc, want 1"
grep -q '✗ outcome: call 0 ended degraded (stopped: max total wait;' <<< "$out" && ok ||
  bad "stopped: terminal line lacks the reason: $out"
grep -Eq '"stopped":[[:space:]]*"max total wait"' "$tmp/mw.json" && ok || bad "stopped: not in the JSON"
grep -q 'stopped: max total wait' "$tmp/mw.xml" && ok || bad "stopped: not in the JUnit"
grep -q 'stopped: max total wait' "$tmp/mw.html" && ok || bad "stopped: not in the HTML"

# --- fial{} -------------------------------------------------------------
cat > "$tmp/fial.lua" <<'LUA'
return scenario {
  name = "a misspelt step",
  provider = {
    fial { status = 503 },
    chat { content = "hello" },
  },
  expect = { attempts = 2 },
}
LUA
for cmd in check run; do
  out=$("$bin" $cmd "$tmp/fial.lua" 2>&1)
  rc=$?
  [ "$rc" = 2 ] && ok || bad "fial: $cmd exit $rc, want 2"
  grep -qF "$tmp/fial.lua:4: unknown step 'fial' (did you mean 'fail'?)" <<< "$out" && ok ||
    bad "fial: $cmd says: $out"
  grep -q "attempt to call a nil value" <<< "$out" && bad "fial: $cmd shows raw Lua" || ok
done

# --- expect.retry_after_honored ----------------------------------------
cat > "$tmp/honored.lua" <<'LUA'
return scenario {
  name = "US spelling",
  provider = { chat { content = "hello" } },
  expect = {
    retry_after_honored = true,
  },
}
LUA
out=$("$bin" check "$tmp/honored.lua" 2>&1)
rc=$?
[ "$rc" = 2 ] && ok || bad "honored: exit $rc, want 2"
grep -qF "$tmp/honored.lua:5: expect.retry_after_honored: unknown expectation (did you mean 'retry_after_honoured'?)" <<< "$out" &&
  ok || bad "honored: says: $out"

# --- a provider function's runtime error -------------------------------
cat > "$tmp/runtime.lua" <<'LUA'
return scenario {
  name = "a provider function that breaks while serving",
  provider = function(req)
    local t = nil
    return t.x
  end,
  expect = { outcome = "ok" },
}
LUA
out=$("$bin" run "$tmp/runtime.lua" 2>&1)
rc=$?
[ "$rc" = 2 ] && ok || bad "runtime: exit $rc, want 2 (not 1: the client did nothing wrong)"
grep -qF "$tmp/runtime.lua:5: attempt to index a nil value" <<< "$out" && ok ||
  bad "runtime: no file:line in: $out"

finish
