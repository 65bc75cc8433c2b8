#!/usr/bin/env bash
# issue 11, as a user meets it: a trace on a full disk stops serve with
# exit status 2 and one message; a typo in a nested client table names its
# whole path; a 1xx fail status is refused at its line.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd timeout grep

cat > "$tmp/ok.lua" <<'LUA'
return scenario { name = "ok", provider = { chat {} } }
LUA

# serve --trace /dev/full: was "keeps serving, exit 0"; now one message, exit 2.
timeout 20 "$bin" serve "$tmp/ok.lua" --port 0 --trace /dev/full > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" = 2 ] && ok || bad "serve --trace /dev/full exited $rc, want 2"
n=$(grep -c "cannot write trace: No space left on device" "$tmp/err")
[ "$n" = 1 ] && ok || bad "the trace failure was told $n times, want once: $(cat "$tmp/err")"

# client.backoff.base, not client.base.
cat > "$tmp/backoff.lua" <<'LUA'
return scenario { name = "b", provider = { chat {} },
  client = { backoff = { base = -1 } } }
LUA
"$bin" check "$tmp/backoff.lua" > "$tmp/out" 2>&1
grep -q "client.backoff.base must be" "$tmp/out" && ok || bad "backoff path: $(cat "$tmp/out")"
cat > "$tmp/breaker.lua" <<'LUA'
return scenario { name = "b", provider = { chat {} },
  client = { breaker = { threshold = 0 } } }
LUA
"$bin" check "$tmp/breaker.lua" > "$tmp/out" 2>&1
grep -q "client.breaker.threshold must be" "$tmp/out" && ok || bad "breaker path: $(cat "$tmp/out")"

# A 1xx fail status would leave the client waiting: refused at its line.
cat > "$tmp/s100.lua" <<'LUA'
return scenario { name = "c",
  provider = { fail { status = 100 } } }
LUA
"$bin" check "$tmp/s100.lua" > "$tmp/out" 2>&1
rc=$?
[ "$rc" != 0 ] && grep -q "s100.lua:2: fail: field 'status' must be between 200 and 599" "$tmp/out" \
  && ok || bad "status 100: rc $rc: $(cat "$tmp/out")"

finish
