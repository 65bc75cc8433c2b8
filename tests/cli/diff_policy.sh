#!/usr/bin/env bash
# fusebox diff-policy: a profile against itself is exit 0; a changed fact is
# exit 1 and named with both values, and only the facts that changed are
# named; equivalent spellings (">=500" vs "500-599") are the same policy;
# --tolerance absorbs a small numeric difference; bad input is exit 2.
. "$(dirname "$0")/lib.sh"
cd "$src"
need_fusebox
dp() { "$bin" diff-policy "$@" > "$tmp/out" 2> "$tmp/err"; }
expect_rc() { # WANT WHAT
  if [ "$rc" = "$1" ]; then ok; else bad "$2: exit $rc, want $1: $(cat "$tmp/out" "$tmp/err")"; fi
}
base=profiles/openai-node.lua

for p in profiles/*.lua; do dp "$p" "$p"; rc=$?; expect_rc 0 "$p against itself"; done

# one edit -> exactly one line naming it with both values
edit() { sed "$1" "$base" > "$tmp/new.lua"; dp "$base" "$tmp/new.lua"; rc=$?; }
one_fact() { # SED WANT-LINE
  edit "$1"
  expect_rc 1 "$1"
  local n; n=$(grep -c '→' "$tmp/out")
  if [ "$n" = 1 ] && grep -qxF "$2" "$tmp/out"; then ok; else bad "$1: want only '$2', got: $(cat "$tmp/out")"; fi
}
one_fact 's/max_attempts = 3/max_attempts = 5/' 'attempts per call: 3 → 5'
one_fact 's/cap = 8/cap = 20/' 'backoff cap (s): 8 → 20'
one_fact 's/jitter = "subtract", fraction = 0.25/jitter = "full"/' 'backoff jitter: subtract → full'
one_fact 's/409, //' 'status 409: retried → not retried'
one_fact 's/"timeout" }/"timeout", "body" }/' "failure 'body': not retried → retried"
one_fact 's/x_should_retry = true/x_should_retry = false/' 'x-should-retry obeyed: true → false'
one_fact 's/"retry-after-ms", //' 'Retry-After forms read: retry-after-ms, seconds, date → seconds, date'
one_fact 's/idempotency_key = false/idempotency_key = "per_call"/' 'Idempotency-Key: false → per_call'
one_fact 's/streams_retried = false/streams_retried = "before_content"/' 'broken stream retried: not retried → retried only before any text'
one_fact 's/"timeout" }/"timeout", "not_json" }/' "failure 'not_json': not retried → retried"
# "shape" is both not_json and missing_fields: the same as the two spelt out,
# not the same as one of them
sed 's/"timeout" }/"timeout", "shape" }/' "$base" > "$tmp/shape.lua"
sed 's/"timeout" }/"timeout", "not_json", "missing_fields" }/' "$base" > "$tmp/split.lua"
dp "$tmp/shape.lua" "$tmp/split.lua"; rc=$?; expect_rc 0 '"shape" vs not_json + missing_fields'
sed 's/"timeout" }/"timeout", "not_json" }/' "$base" > "$tmp/nj.lua"
dp "$tmp/shape.lua" "$tmp/nj.lua"; rc=$?; expect_rc 1 '"shape" vs not_json alone'
grep -qxF "failure 'missing_fields': retried → not retried" "$tmp/out" && ok || bad "shape vs not_json: $(cat "$tmp/out")"
# the cap is stated as what a longer Retry-After leads to
one_fact 's/cap      = false, /cap = 60, over_cap = "backoff", /' 'Retry-After over 60 s: slept as asked → falls back to backoff'
# a negative number and a past date are two facts; absent, negative is past's
one_fact 's/past     = "immediate",/past = "immediate", negative = "backoff",/' 'zero or negative Retry-After: retried at once → falls back to backoff'
one_fact 's/past     = "immediate",/past = "stop", negative = "immediate",/' 'past Retry-After date: retried at once → gives up'
# a decimal read is one fact however it is spelt; truncated is another
one_fact 's/past     = "immediate",/past = "immediate", decimal = "truncate",/' 'decimal Retry-After: waited as asked → its whole seconds waited'
edit 's/"seconds", "date"/"seconds", "decimal", "date"/'; expect_rc 0 '"decimal" among the forms vs a profile older than the key'
edit 's/past     = "immediate",/past = "immediate", negative = "immediate",/'; expect_rc 0 'negative spelt out as past'
# the same policy spelt otherwise
edit 's/">=500"/"500-599"/'; expect_rc 0 '">=500" vs "500-599"'
edit 's/factor = 2, //'; expect_rc 0 'factor left to its default 2'
# one wait window in three spellings: 0.5 s with up to 50 % off, 0.25 s plus up
# to 100 %, 0.5 s "equal"; a window that is not the same is named
sed 's/base = 0.5, factor = 2, cap = 8, jitter = "subtract", fraction = 0.25/base = 0.5, factor = 2, cap = 8, jitter = "subtract", fraction = 0.5/' "$base" > "$tmp/sub.lua"
sed 's/base = 0.5, factor = 2, cap = 8, jitter = "subtract", fraction = 0.25/base = 0.25, factor = 2, cap = 8, jitter = "add", fraction = 1/' "$base" > "$tmp/add.lua"
sed 's/base = 0.5, factor = 2, cap = 8, jitter = "subtract", fraction = 0.25/base = 0.5, factor = 2, cap = 8, jitter = "equal"/' "$base" > "$tmp/equal.lua"
dp "$tmp/sub.lua" "$tmp/add.lua"; rc=$?; expect_rc 0 'subtract 0.5 of 0.5 s vs add 1 of 0.25 s'
dp "$tmp/sub.lua" "$tmp/equal.lua"; rc=$?; expect_rc 0 'subtract 0.5 vs equal'
sed 's/base = 0.25, factor = 2, cap = 8, jitter = "add", fraction = 1/base = 0.3, factor = 2, cap = 8, jitter = "add", fraction = 1/' "$tmp/add.lua" > "$tmp/add2.lua"
dp "$tmp/sub.lua" "$tmp/add2.lua"; rc=$?; expect_rc 1 'add 1 of 0.3 s is another window'
grep -qxF 'backoff base (s): 0.5 → 0.6' "$tmp/out" && ok || bad "another window not named as such: $(cat "$tmp/out")"
# with a tolerance a backoff is its first wait's window: 0.375-0.5 s and 0.5 s
# flat are one within 35 % (jitter read from five samples is noisy); full
# jitter (0-0.5 s) is not
sed 's/jitter = "subtract", fraction = 0.25/jitter = "none"/' "$base" > "$tmp/flat.lua"
dp --tolerance 0.35 "$base" "$tmp/flat.lua"; rc=$?; expect_rc 0 'subtract 0.25 vs none within --tolerance 0.35'
dp "$base" "$tmp/flat.lua"; rc=$?; expect_rc 1 'subtract 0.25 vs none without a tolerance'
sed 's/jitter = "subtract", fraction = 0.25/jitter = "full"/' "$base" > "$tmp/full.lua"
dp --tolerance 0.35 "$base" "$tmp/full.lua"; rc=$?; expect_rc 1 'subtract 0.25 vs full within --tolerance 0.35'
grep -qxF 'backoff jitter: subtract → full' "$tmp/out" && ok || bad "full jitter not named: $(cat "$tmp/out")"
# within tolerance
edit 's/base = 0.5/base = 0.52/'; expect_rc 1 'base 0.5 vs 0.52 without --tolerance'
sed 's/base = 0.5/base = 0.52/' "$base" > "$tmp/new.lua"
dp --tolerance 0.1 "$base" "$tmp/new.lua"; rc=$?; expect_rc 0 'base 0.5 vs 0.52 with --tolerance 0.1'

# openai 6.49 -> 7.x: the Retry-After facts the issue states (over 60 s,
# unparsable, negative and a past date: the last two one key before), and the body
# timeout of 7.x that fusebox learn found (tests/cli/learn_bump.sh)
dp "$base" tests/data/profiles/openai-node-7.lua; rc=$?; expect_rc 1 '6.49 vs 7.x'
if [ "$(grep -c '→' "$tmp/out")" = 5 ] && grep -qxF 'timeout covers: headers → whole' "$tmp/out" && grep -qxF 'Retry-After over 60 s: slept as asked → falls back to backoff' "$tmp/out" \
   && grep -qxF 'unparsable Retry-After: retried at once → falls back to backoff' "$tmp/out" \
   && grep -qxF 'zero or negative Retry-After: retried at once → falls back to backoff' "$tmp/out" \
   && grep -qxF 'past Retry-After date: retried at once → falls back to backoff' "$tmp/out"; then ok
else bad "6.49 vs 7.x: $(cat "$tmp/out")"; fi

# bad input
dp "$base"; rc=$?; expect_rc 2 'one profile'
dp "$base" "$tmp/missing.lua"; rc=$?; expect_rc 2 'a missing file'
if grep -q 'missing.lua' "$tmp/err"; then ok; else bad "missing file not named: $(cat "$tmp/err")"; fi
printf 'return profile { name = "x", version = "1", max_attempts = 3, retries = {}, retry_after = { honored = true } }\n' > "$tmp/typo.lua"
dp "$base" "$tmp/typo.lua"; rc=$?; expect_rc 2 'a misspelt key'
if grep -q 'typo.lua:1:' "$tmp/err"; then ok; else bad "typo not FILE:LINE: $(cat "$tmp/err")"; fi
dp --bogus "$base" "$base"; rc=$?; expect_rc 2 'an unknown option'
dp --help; rc=$?; expect_rc 0 '--help'
finish
