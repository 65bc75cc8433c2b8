#!/usr/bin/env bash
# Issue 24: what a person needs to find *why* a run is red, in the first
# line they read. Each case pins one message or one option form:
#   stopped      the guarded client's reason for giving up (a Retry-After of
#                30 s meets max_wait 30 s) is in the terminal line, the JSON,
#                the JUnit and the HTML report
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

finish
