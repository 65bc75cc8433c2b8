#!/usr/bin/env bash
# A mistake in a scenario's tables is reported as FILE:LINE: message, the
# line being the offending key's, and alike by check, run, serve and exec
# (they all load through one validator). One case per table and kind of
# mistake: client, expect, ratelimit, at the top level, nested, in a list,
# and in a table the scenario takes from a local variable.
set -uo pipefail
src=${FUSEBOX_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${FUSEBOX_BIN:-$src/build/fusebox}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# The scenario with a slot for each table; a case fills one slot with its
# mistake, marked `--<<` on the line the message must name.
scenario() { # name client expect ratelimit
  cat <<LUA
return scenario {
  name = "$1",
  provider = {
    fail { status = 429, retry_after = 1 },
    chat { content = "hello" },
  },
  ratelimit = {
    rpm = 600,
    $4
  },
  client = {
    deadline = 8,
    $2
  },
  expect = {
    attempts = 2,
    $3
  },
}
LUA
}

# name | client slot | expect slot | ratelimit slot | message
cases=(
  "client_top|attemps = 3, --<<|||client.attemps: unknown key (did you mean 'attempts'?)"
  "client_nested|backoff = {\n      base = 1,\n      bsae = 2, --<<\n    },|||client.backoff.bsae: unknown key"
  "client_value|attempts = 0, --<<|||client.attempts must be a number from 1 to 100"
  "client_chain|chain = {\n      \"primary\",\n      \"bakup\", --<<\n    },|||client.chain[2]: no provider named 'bakup'"
  "expect_top||retry_after_honored = true, --<<||expect.retry_after_honored: unknown expectation"
  "expect_nested||backoff = {\n      min_gap = -1, --<<\n    },||expect.backoff.min_gap: must be a number >= 0"
  "ratelimit_top|||stlye = \"openai\", --<<|ratelimit.stlye: unknown key"
  "ratelimit_value|||style = \"azure\", --<<|ratelimit.style must be \"openai\" or \"anthropic\""
)

for c in "${cases[@]}"; do
  IFS='|' read -r name cl ex rl msg <<< "$c"
  f="$tmp/$name.lua"
  scenario "$name" "$(printf "$cl")" "$(printf "$ex")" "$(printf "$rl")" > "$f"
  line=$(grep -n -- '--<<' "$f" | cut -d: -f1)
  want="$f:$line: $msg"
  for cmd in check run serve exec; do
    case $cmd in
      check) "$bin" check "$f" > "$tmp/out" 2> "$tmp/err" ;;
      run) "$bin" run --quiet "$f" > "$tmp/out" 2> "$tmp/err" ;;
      serve) timeout 10 "$bin" serve "$f" --port 0 > "$tmp/out" 2> "$tmp/err" ;;
      exec) "$bin" exec --quiet "$f" -- true > "$tmp/out" 2> "$tmp/err" ;;
    esac
    rc=$?
    if [ $rc -ne 2 ]; then
      bad "$cmd $name: exit $rc, wanted 2"
    elif ! grep -qF -- "$want" "$tmp/err"; then
      bad "$cmd $name: wanted '$want', got: $(head -c 400 "$tmp/err")"
    else
      ok
    fi
  done
done

# A table taken from a local variable: the line inside that table.
f="$tmp/policy.lua"
cat > "$f" <<'LUA'
local policy = {
  deadline = 8,
  attemps = 3, --<<
}
return scenario {
  name = "policy",
  provider = { chat {} },
  client = policy,
  expect = { attempts = 1 },
}
LUA
"$bin" check "$f" > /dev/null 2> "$tmp/err"
if grep -qF -- "$f:3: client.attemps: unknown key" "$tmp/err"; then ok
else bad "client from a local table: wanted line 3, got: $(cat "$tmp/err")"; fi

# The same scenario without mistakes: every command accepts it.
f="$tmp/good.lua"
scenario "good" "attempts = 3," "retry_after_honoured = true," "style = \"openai\"," > "$f"
if "$bin" check "$f" > "$tmp/out" 2> "$tmp/err" && grep -q "^ok " "$tmp/out"; then ok
else bad "check good: $(cat "$tmp/err")"; fi
if "$bin" run --quiet "$f" > "$tmp/out" 2> "$tmp/err"; then ok
else bad "run good: exit $?: $(cat "$tmp/err")"; fi
# exec loads and judges it (`true` never calls the provider, so a verdict may
# fail: exit 1); what matters here is that the file is not refused (exit 2).
"$bin" exec --quiet "$f" -- true > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 1 ]; then ok
else bad "exec good: exit $rc: $(cat "$tmp/err")"; fi
"$bin" serve "$f" --port 0 > "$tmp/out" 2> "$tmp/err" &
spid=$!
for _ in $(seq 300); do grep -q '^port ' "$tmp/out" 2>/dev/null && break; sleep 0.1; done
if grep -q '^port ' "$tmp/out"; then ok; else bad "serve good: $(cat "$tmp/err")"; fi
kill -INT $spid 2>/dev/null
wait $spid 2>/dev/null

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
