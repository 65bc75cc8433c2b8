#!/usr/bin/env bash
# No green without evidence, end to end with small clients of our own run by
# fusebox exec: a client that calls a wrong path fails `served` and every
# report opens with one sentence; one that exits non-zero after a fault a
# retry survives fails `outcome` (with its exit status and error line); one
# that ignores the stream fails `exercised`; one killed while it honours a
# long Retry-After keeps its profile's promise (`profile` passes and says so)
# and fails `outcome`; a well-behaved client is green on the same scenarios.
. "$(dirname "$0")/lib.sh"
cd "$src"
need_fusebox
need_cmd curl sh
need_python json
# check JSON PYTHON-EXPR: the expression over `r` (first result) must hold
check() {
  if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['results'][0]; v={x['name']:x for x in r['verdicts']}; sys.exit(0 if ($2) else 1)" "$1"; then ok
  else bad "$3: $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][0]; print(r['status'], r.get('exit_code'), [(x['name'], x['status'], x['evidence'][:100]) for x in r['verdicts']])" "$1")"; fi
}
body='{"model":"m","messages":[{"role":"user","content":"hi"}]}'
cat > "$tmp/good.sh" <<SH
curl -sS --fail --retry 3 --retry-delay 0 -H 'Content-Type: application/json' -d '$body' "\$OPENAI_BASE_URL/chat/completions"
SH
cat > "$tmp/wrong_path.sh" <<SH
curl -sS --fail --retry 3 -H 'Content-Type: application/json' -d '$body' "\$FUSEBOX_URL/v2/chat/completions"
SH
cat > "$tmp/no_retry.sh" <<SH
curl -sS --fail -H 'Content-Type: application/json' -d '$body' "\$OPENAI_BASE_URL/chat/completions"
SH
cat > "$tmp/no_stream.sh" <<SH
curl -sS --fail --retry 3 -H 'Content-Type: application/json' -d '$body' "\$OPENAI_BASE_URL/chat/completions"
SH
cat > "$tmp/ra_long.lua" <<'LUA'
return scenario {
  name = "429 asking for 30 s",
  provider = { fail { status = 429, code = "rate_limit_exceeded", retry_after = 30 },
               chat { content = "hello" } },
  client = { deadline = 40 },
  expect = { outcome = "ok", retry_after_honoured = true },
}
LUA
cat > "$tmp/ra_profile.lua" <<'LUA'
return profile {
  name = "patient", version = "test",
  max_attempts = 3,
  backoff = { base = 1 },
  retries = { 429, ">=500" },
  retry_after = { honoured = true, forms = { "seconds" } },
}
LUA
ex() { # NAME SCENARIO CLIENT [exec options]
  local name=$1 scen=$2 client=$3; shift 3
  "$bin" exec --quiet --timeout "${T:-10}" --json "$tmp/$name.json" --junit "$tmp/$name.xml" "$@" "$scen" \
    -- sh "$tmp/$client.sh" > "$tmp/$name.out" 2> "$tmp/$name.err"
}
# 1. a wrong path: served fails, the headline opens the report
ex wrong scenarios/examples/chat_ok.lua wrong_path; rc=$?
[ $rc = 1 ] && ok || bad "wrong path: exit $rc"
check "$tmp/wrong.json" "v['served']['status']=='fail' and v['exercised']['status']=='fail' and r['status']=='fail' and d['headline'].startswith('No request reached the scenario')" "wrong path"
grep -q 'property name="headline" value="No request reached the scenario' "$tmp/wrong.xml" && ok || bad "no headline in JUnit"
# 2. exits non-zero on a 503 a retry survives (curl --fail without --retry)
ex noretry scenarios/transient/http_503.lua no_retry
check "$tmp/noretry.json" "v['outcome']['status']=='fail' and r['exit_code']==22 and 'exited 22' in v['outcome']['evidence'] and r['attempts_sent']==1" "no retry"
grep -q '<failure message="1 verdict failed: outcome (exit 22)"' "$tmp/noretry.xml" && grep -q 'client error: curl: (22)' "$tmp/noretry.xml" && ok || bad "JUnit failure lacks exit or error line: $(grep failure "$tmp/noretry.xml")"
# 3. the same scenario, a good client: green
ex good scenarios/transient/http_503.lua good
check "$tmp/good.json" "r['status']=='pass' and v['outcome']['status']=='pass' and v['exercised']['status']=='pass' and r['exit_code']==0" "good client"
# 4. a stream scenario, a client that never asks for a stream
ex nostream scenarios/stream/drop_after_chunks.lua no_stream
check "$tmp/nostream.json" "v['exercised']['status']=='fail' and 'asked for a stream' in v['exercised']['evidence'] and r['status']=='fail'" "ignores the stream"
# 5. killed by --timeout while it honours Retry-After: 30
T=3 ex killed "$tmp/ra_long.lua" good --profile "$tmp/ra_profile.lua"
check "$tmp/killed.json" "v['profile']['status']=='pass' and 'waiting out its Retry-After' in v['profile']['evidence'] and v['outcome']['status']=='fail' and 'killed by --timeout' in v['outcome']['evidence'] and r.get('killed_by_timeout')" "killed while honouring Retry-After"
finish
