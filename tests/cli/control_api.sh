#!/usr/bin/env bash
# fusebox serve --control (docs/control.md), driven with curl through every
# control endpoint: PUT a scenario, requests, journal, report, trace, reset;
# a bad scenario (400 with file:line, nothing changes); two sessions in
# parallel (header and path prefix) that do not see each other; a PUT while
# a request is in flight; the token (401, never written anywhere); unknown
# sessions and paths (404), oversize bodies (413); and the refusals at
# start (non-loopback bind without a token, --state) and without --control.
. "$(dirname "$0")/lib.sh"
pids=()
at_exit 'for p in "${pids[@]}"; do kill "$p"; done'
need_fusebox
need_cmd curl awk
need_cmd jq

# start NAME ARGS...: serve in the background; sets port and $NAME.pid.
start() {
  local name=$1; shift
  "$bin" serve "$@" --port 0 > "$tmp/$name.out" 2> "$tmp/$name.err" &
  pids+=($!)
  eval "${name}_pid=$!"
  wait_port_line "$tmp/$name.out"
  port=$(awk '/^port /{print $2}' "$tmp/$name.out")
  [ -n "$port" ] || { bad "$name: serve printed no port: $(cat "$tmp/$name.err")"; finish; }
}
# call METHOD PATH [curl args...]: the status; the body in $tmp/b, headers in $tmp/h.
call() {
  local m=$1 p=$2; shift 2
  curl -s -o "$tmp/b" -D "$tmp/h" -w '%{http_code}' --max-time 10 -X "$m" "$base$p" "$@"
}
# js FILTER: jq over the last body, compact; jt FILTER: raw text.
js() { jq -c "$1" "$tmp/b"; }
jt() { jq -r "$1" "$tmp/b"; }
chat() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@" -d '{"model":"m","messages":[]}'; }

cat > "$tmp/two.lua" <<'LUA'
return scenario {
  name = "429 then ok",
  provider = { fail { status = 429 }, chat { content = "hi" } },
  expect = { attempts = 2 },
}
LUA
cat > "$tmp/slow.lua" <<'LUA'
return scenario {
  name = "slow answer",
  provider = function(req)
    if req.body and req.body.slow then return delay { 0.5, chat { content = "late" } } end
    return chat { content = "quick" }
  end,
}
LUA
printf 'return scenario {\n  name = "bad",\n  provider = { chat { colour = 1 } },\n}\n' > "$tmp/bad.lua"

# ---------------------------------------------------------------- no scenario yet
start s --control --trace "$tmp/t.jsonl"
base="http://127.0.0.1:$port"
[ "$(call GET /__fusebox/health)" = 200 ] && [ "$(js '[.ok,.sessions,.arrivals]')" = '[true,["default"],0]' ] \
  && ok || bad "health: $(cat "$tmp/b")"
grep -qi '^content-type: application/json' "$tmp/h" && ok || bad "health content type"
[ "$(call POST /v1/chat/completions -d '{}')" = 503 ] && [ "$(jt .error.type)" = fusebox_no_scenario ] \
  && ok || bad "no scenario: want 503 fusebox_no_scenario, got $(cat "$tmp/b")"

# ---------------------------------------------------------------- PUT, requests, report
[ "$(call PUT /__fusebox/scenario --data-binary @"$tmp/two.lua")" = 200 ] \
  && [ "$(js '[.ok,.session,.scenario]')" = '[true,"default","429 then ok"]' ] && ok || bad "PUT default: $(cat "$tmp/b")"
[ "$(chat "$base/v1/chat/completions")" = 429 ] && ok || bad "default attempt 1 should be 429"
[ "$(chat "$base/v1/chat/completions")" = 200 ] && ok || bad "default attempt 2 should be 200"
[ "$(call GET /__fusebox/requests)" = 200 ] \
  && [ "$(js '[.requests[]|[.n,.attempt,.status,.step,.how,.dialect,.path]]')" = \
       '[[1,1,429,"fail","complete","openai-chat","/v1/chat/completions"],[2,2,200,"chat","complete","openai-chat","/v1/chat/completions"]]' ] \
  && [ "$(js '[.requests[]|(.t_end >= .t_arrive and .t_arrive >= 0 and (.key|length) > 0)]|all')" = true ] \
  && ok || bad "requests: $(cat "$tmp/b")"
[ "$(call GET /__fusebox/report)" = 200 ] \
  && [ "$(js '[(.results[0].verdicts[]|select(.name=="attempts")|.status), .results[0].name]')" = \
       '["pass","429 then ok"]' ] && ok || bad "report: $(head -c 600 "$tmp/b")"
[ "$(js '[.results[0].verdicts[]|((.status=="pass" or .status=="fail" or .status=="n/a") and (.evidence|type=="string"))]|all')" = true ] \
  && ok || bad "report verdicts lack status or evidence"

# ---------------------------------------------------------------- a bad scenario changes nothing
[ "$(call PUT '/__fusebox/scenario' --data-binary @"$tmp/bad.lua")" = 400 ] \
  && [ "$(jt .error.type)" = fusebox_bad_scenario ] && grep -q '"scenario.lua:3: ' "$tmp/b" \
  && ok || bad "bad PUT: want 400 scenario.lua:3:, got $(cat "$tmp/b")"
"$bin" check "$tmp/bad.lua" 2> "$tmp/check.err"
msg=$(jt .error.message)
[ "$(head -1 "$tmp/check.err" | sed 's/^.*bad\.lua:/scenario.lua:/')" = "$msg" ] && ok \
  || bad "PUT message differs from check's: '$msg' vs '$(cat "$tmp/check.err")'"
[ "$(call PUT '/__fusebox/scenario?name=mine.lua' --data-binary @"$tmp/bad.lua")" = 400 ] && grep -q '"mine.lua:3: ' "$tmp/b" \
  && ok || bad "PUT ?name=mine.lua: $(cat "$tmp/b")"
[ "$(call GET /__fusebox/requests)" = 200 ] && [ "$(js '.requests|length')" = 2 ] && ok || bad "a bad PUT changed the session"

# ---------------------------------------------------------------- two sessions in parallel
[ "$(call PUT '/__fusebox/scenario?session=a' --data-binary @"$tmp/two.lua")" = 200 ] && [ "$(jt .session)" = a ] \
  && ok || bad "PUT a: $(cat "$tmp/b")"
# a by header, b by path prefix (b has no scenario of its own: a copy of default's)
chat -H 'X-Fusebox-Session: a' "$base/v1/chat/completions" > "$tmp/a1" &
p1=$!
chat "$base/__session/b/v1/chat/completions" > "$tmp/b1" &
wait $p1 $!
[ "$(cat "$tmp/a1") $(cat "$tmp/b1")" = "429 429" ] && ok || bad "parallel first attempts: a $(cat "$tmp/a1"), b $(cat "$tmp/b1")"
[ "$(chat -H 'X-Fusebox-Session: a' "$base/v1/chat/completions")" = 200 ] && ok || bad "a attempt 2"
[ "$(call GET '/__fusebox/requests?session=a')" = 200 ] && [ "$(js '[.session,[.requests[].attempt]]')" = '["a",[1,2]]' ] \
  && ok || bad "journal a: $(cat "$tmp/b")"
[ "$(call GET '/__fusebox/requests?session=b')" = 200 ] \
  && [ "$(js '[.session,[.requests[]|[.attempt,.path]]]')" = '["b",[[1,"/v1/chat/completions"]]]' ] \
  && ok || bad "journal b: $(cat "$tmp/b")"
[ "$(call GET /__fusebox/requests)" = 200 ] && [ "$(js '.requests|length')" = 2 ] && ok || bad "default saw another session's requests"
[ "$(call GET '/__fusebox/report?session=a')" = 200 ] && [ "$(js '[.results[0].arrivals,(.results[0].verdicts[]|select(.name=="attempts")|.status)]')" = '[2,"pass"]' ] \
  && ok || bad "report a: $(head -c 400 "$tmp/b")"
[ "$(call GET '/__fusebox/report?session=b')" = 200 ] && [ "$(js '[.results[0].arrivals,(.results[0].verdicts[]|select(.name=="attempts")|.status)]')" = '[1,"fail"]' ] \
  && ok || bad "report b: $(head -c 400 "$tmp/b")"
[ "$(call GET '/__fusebox/trace?session=a')" = 200 ] && grep -qi '^content-type: application/x-ndjson' "$tmp/h" \
  && [ "$(jq -s -c '[.[0].ev, .[0].scenario, (map(.session)|unique), map(.ev)]' "$tmp/b")" = \
       '["session","429 then ok",["a"],["session","arrive","end","arrive","end"]]' ] && ok || bad "trace a: $(head -c 400 "$tmp/b")"
[ "$(call GET /__fusebox/health)" = 200 ] && [ "$(js '[.sessions,.arrivals]')" = '[["default","a","b"],5]' ] \
  && ok || bad "health with sessions: $(cat "$tmp/b")"

# ---------------------------------------------------------------- reset
[ "$(call POST '/__fusebox/reset?session=a')" = 200 ] && [ "$(js '[.ok,.session]')" = '[true,"a"]' ] && ok || bad "reset a: $(cat "$tmp/b")"
[ "$(call GET '/__fusebox/requests?session=a')" = 200 ] && [ "$(js '.requests|length')" = 0 ] && ok || bad "reset left a's journal"
[ "$(chat -H 'X-Fusebox-Session: a' "$base/v1/chat/completions")" = 429 ] && ok || bad "after reset, a's counters should start over"
[ "$(call GET '/__fusebox/requests?session=b')" = 200 ] && [ "$(js '.requests|length')" = 1 ] && ok || bad "reset of a touched b"

# ---------------------------------------------------------------- a PUT while a request is in flight
[ "$(call PUT '/__fusebox/scenario?session=c' --data-binary @"$tmp/slow.lua")" = 200 ] && ok || bad "PUT c"
curl -s -o "$tmp/c1" -w '%{http_code}' --max-time 10 -H 'X-Fusebox-Session: c' "$base/v1/chat/completions" \
  -d '{"model":"m","slow":true}' > "$tmp/c1.code" &
cpid=$!
for _ in $(seq 250); do
  [ "$(call GET '/__fusebox/requests?session=c')" = 200 ] && [ "$(js '.requests|length')" = 1 ] && break; sleep 0.02
done
[ "$(js '[.requests[0].status,.requests[0].t_end]')" = '[null,null]' ] && ok || bad "in flight: want null status, got $(cat "$tmp/b")"
[ "$(call PUT '/__fusebox/scenario?session=c' --data-binary @"$tmp/two.lua")" = 200 ] && ok || bad "PUT c while in flight"
wait $cpid
[ "$(cat "$tmp/c1.code")" = 200 ] && grep -q late "$tmp/c1" && ok || bad "the in-flight request did not finish: $(cat "$tmp/c1.code")"
[ "$(call GET '/__fusebox/requests?session=c')" = 200 ] && [ "$(js '.requests|length')" = 0 ] && ok || bad "new run of c shows the old run's request"

# ---------------------------------------------------------------- errors
[ "$(call GET '/__fusebox/requests?session=nope')" = 404 ] && [ "$(jt .error.type)" = fusebox_unknown_session ] && ok || bad "unknown session requests: $(cat "$tmp/b")"
[ "$(call GET '/__fusebox/report?session=nope')" = 404 ] && ok || bad "unknown session report"
[ "$(call GET '/__fusebox/trace?session=nope')" = 404 ] && ok || bad "unknown session trace"
[ "$(call POST '/__fusebox/reset?session=nope')" = 404 ] && [ "$(jt .error.type)" = fusebox_unknown_session ] && ok || bad "unknown session reset"
[ "$(call GET '/__fusebox/requests?session=bad%20name')" = 400 ] && [ "$(jt .error.type)" = fusebox_bad_session ] && ok || bad "bad session name: $(cat "$tmp/b")"
[ "$(chat -H 'X-Fusebox-Session: no/good' "$base/v1/chat/completions")" = 400 ] && ok || bad "bad session header should be 400"
[ "$(call GET /__fusebox/bogus)" = 404 ] && [ "$(jt .error.type)" = fusebox_unknown_control ] && ok || bad "unknown control path: $(cat "$tmp/b")"
[ "$(call GET /__fusebox/scenario)" = 405 ] && ok || bad "GET /scenario should be 405"
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' > "$tmp/big.lua"
[ "$(call PUT /__fusebox/scenario --data-binary @"$tmp/big.lua")" = 413 ] && [ "$(jt .error.type)" = fusebox_too_large ] && ok || bad "oversize body: $(cat "$tmp/b")"
[ "$(call GET '/__fusebox/requests?session=nope')" = 404 ] && ok || bad "the server is still fine after a 413"

kill -INT "$s_pid"; wait "$s_pid"; rc=$?
[ $rc = 0 ] && ok || bad "serve --control exit $rc after SIGINT"
# every session's `session` events, arrive/end pairs per session, and `done` last
[ "$(jq -s -c '[(map(select(.ev=="session")|(.session//"default"))|group_by(.)|map([.[0],length])),
               (([.[]|select(.ev=="arrive")|[(.session//"default"),.id]]|sort) ==
                ([.[]|select(.ev=="end")|[(.session//"default"),.id]]|sort)), .[-1].ev]' "$tmp/t.jsonl")" = \
  '[[["a",2],["b",1],["c",2],["default",1]],true,"done"]' ] && ok || bad "the --trace file"

# ---------------------------------------------------------------- the token
tok=tok-$RANDOM-secret
start k "$tmp/two.lua" --control --control-token "$tok" --trace "$tmp/k.jsonl"
base="http://127.0.0.1:$port"
[ "$(call GET /__fusebox/health)" = 401 ] && [ "$(jt .error.type)" = fusebox_unauthorized ] && ok || bad "no token: $(cat "$tmp/b")"
[ "$(call GET /__fusebox/health -H "Authorization: Bearer ${tok}x")" = 401 ] && ok || bad "wrong token"
[ "$(call GET /__fusebox/health -H "Authorization: Bearer ${tok%?}")" = 401 ] && ok || bad "a token's prefix"
[ "$(call GET /__fusebox/health -H "Authorization: Bearer $tok")" = 200 ] && ok || bad "right token"
[ "$(call PUT /__fusebox/scenario --data-binary @"$tmp/two.lua")" = 401 ] && ok || bad "PUT without token"
[ "$(chat "$base/v1/chat/completions")" = 429 ] && ok || bad "provider requests need no token"
kill -INT "$k_pid"; wait "$k_pid"
grep -q "$tok" "$tmp/k.jsonl" "$tmp/k.out" "$tmp/k.err" && bad "the token was written" || ok

# ---------------------------------------------------------------- refused at start
"$bin" serve "$tmp/two.lua" --control --bind 0.0.0.0 --port 0 > /dev/null 2> "$tmp/e"; rc=$?
[ $rc = 2 ] && [ "$(wc -l < "$tmp/e")" = 1 ] && grep -q -- '--control-token' "$tmp/e" && ok || bad "non-loopback without token: exit $rc, $(cat "$tmp/e")"
"$bin" serve "$tmp/two.lua" --control --state redis://127.0.0.1:1 --port 0 > /dev/null 2> "$tmp/e"; rc=$?
[ $rc = 2 ] && grep -q -- '--state' "$tmp/e" && ok || bad "--control with --state: exit $rc, $(cat "$tmp/e")"
"$bin" serve "$tmp/two.lua" --control-token x --port 0 > /dev/null 2> "$tmp/e"; rc=$?
[ $rc = 2 ] && ok || bad "--control-token without --control: exit $rc"
"$bin" serve --port 0 > /dev/null 2>&1; [ $? = 2 ] && ok || bad "serve without a scenario nor --control should exit 2"
"$bin" serve --help | grep -q -- '--control-token' && ok || bad "serve --help lacks --control-token"

# ---------------------------------------------------------------- without --control
start n "$tmp/two.lua"
base="http://127.0.0.1:$port"
[ "$(call GET /__fusebox/health)" = 404 ] && [ "$(jt .error.type)" = fusebox_unknown_endpoint ] && ok || bad "no --control: $(cat "$tmp/b")"
[ "$(call PUT /__fusebox/scenario --data-binary @"$tmp/two.lua")" = 404 ] && ok || bad "no --control: PUT"
[ "$(chat "$base/__session/x/v1/chat/completions")" = 404 ] && ok || bad "no --control: a session prefix is an unserved path"
kill -INT "$n_pid"; wait "$n_pid"

finish
