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
#   eq           --time-scale=0.5 is --time-scale 0.5 (and --json=FILE)
#   parents      run --trace-dir a/b/c and --json x/y/r.json create the folders
#   wrap         a long scenario name is written whole, never cut to "[gu…]"
#   alone        without --trace-dir no report names a trace file (it is
#                deleted when the run ends)
#   start_error  the pytest and node helpers say why `serve` did not start
#                (its error line), not the tail of its usage text
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

# --- --opt=value ---------------------------------------------------------
out=$("$bin" run --time-scale=0.5 --json="$tmp/eq.json" "$tmp/max_wait.lua" 2>&1)
rc=$?
[ "$rc" = 1 ] && ok || bad "eq: exit $rc, want 1: $out"
grep -q "time scale 0.5)" <<< "$out" && ok || bad "eq: --time-scale=0.5 not taken: $out"
[ -s "$tmp/eq.json" ] && ok || bad "eq: --json=FILE wrote nothing"
out=$("$bin" run --time-scale=abc "$tmp/max_wait.lua" 2>&1)
[ $? = 2 ] && grep -q "time-scale" <<< "$out" && ok || bad "eq: --time-scale=abc: $out"

# --- output parents --------------------------------------------------------
(cd "$tmp" && "$bin" run --quiet --trace-dir a/b/c --json x/y/r.json --html h/i/r.html \
   --junit j/k/r.xml "$tmp/max_wait.lua" >/dev/null 2>&1)
[ -d "$tmp/a/b/c" ] && ls "$tmp/a/b/c"/*.jsonl >/dev/null 2>&1 && ok ||
  bad "parents: --trace-dir a/b/c not created or empty"
for f in x/y/r.json h/i/r.html j/k/r.xml; do
  [ -s "$tmp/$f" ] && ok || bad "parents: $f not written"
done

# --- reports stand alone -------------------------------------------------
"$bin" run --quiet --html "$tmp/alone.html" --json "$tmp/alone.json" --junit "$tmp/alone.xml" \
  "$tmp/max_wait.lua" >/dev/null 2>&1
grep -l 'fusebox-run-[0-9]*-[0-9]*\.jsonl' "$tmp/alone.html" "$tmp/alone.json" "$tmp/alone.xml" &&
  bad "alone: a report names a deleted trace" || ok
grep -q 'stopped: max total wait' "$tmp/alone.html" && ok || bad "alone: the HTML lost its evidence"
if command -v curl >/dev/null; then
  "$bin" exec --quiet --html "$tmp/ealone.html" --json "$tmp/ealone.json" "$src/scenarios/examples/chat_ok.lua" -- \
    sh -c 'curl -s -o /dev/null -f -H "content-type: application/json" -d "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}" "$OPENAI_BASE_URL/chat/completions"' \
    >/dev/null 2>&1
  rc=$?
  [ "$rc" = 0 ] && ok || bad "alone: exec exit $rc"
  grep -l 'fusebox-exec-' "$tmp/ealone.html" "$tmp/ealone.json" && bad "alone: exec's reports name its deleted temp dir" || ok
fi

# --- a long name is not cut ---------------------------------------------
long="A scenario whose name is much longer than the forty-eight columns of the table"
sed "s/Retry-After 30 s meets max_wait 30 s/$long/" "$tmp/max_wait.lua" > "$tmp/long.lua"
out=$("$bin" run "$tmp/long.lua" 2>&1)
grep -qF "$long [guard]" <<< "$out" && ok || bad "wrap: name cut: $out"
grep -q "…" <<< "$(grep -F "$long" <<< "$out")" && bad "wrap: an ellipsis in: $out" || ok

# --- the helpers' start error ---------------------------------------------
if command -v node >/dev/null; then
  cat > "$tmp/start.mjs" <<JS
import { startFusebox } from '$src/integrations/node/fusebox.mjs';
try { await startFusebox({ bin: '$bin', args: ['--bogus'] }); console.log('started'); }
catch (e) { console.log(e.message); }
JS
  out=$(node "$tmp/start.mjs" 2>&1)
  grep -q "unknown or incomplete option '--bogus'" <<< "$out" && ok || bad "start_error: node says: $out"
  grep -q "usage:" <<< "$out" && bad "start_error: node shows the usage: $out" || ok
fi
for py in ${FUSEBOX_PYTHON:-} python3 /usr/bin/python3; do
  "$py" -c "import pytest" 2>/dev/null || continue
  out=$(cd "$src/integrations/pytest" && "$py" -c "
import fusebox_pytest as f
s = f.Server(bin='$bin', args=['--bogus'])
try:
    s.start(); print('started')
except Exception as e:
    print(e)" 2>&1)
  grep -q "unknown or incomplete option '--bogus'" <<< "$out" && ok || bad "start_error: pytest says: $out"
  grep -q "usage:" <<< "$out" && bad "start_error: pytest shows the usage: $out" || ok
  break
done

finish
