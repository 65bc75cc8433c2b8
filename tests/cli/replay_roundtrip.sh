#!/usr/bin/env bash
# Incidents replayed faithfully (issue 25 item 3). A real SDK agent
# (tests/cli/clients/stream_agent.mjs, the `openai` SDK, streamed tool
# calls, a turn whose stream breaks asked again, tools run at the effect
# endpoint) is recorded through `fusebox record` in front of a
# `fusebox serve` of scenarios/tools/, and the recording is replayed with
# `fusebox exec`: the agent receives the same events byte for byte (ids and
# timestamps the server makes fresh masked), reaches its tool again, and
# the generated expect judges tool_integrity and side_effects (pass, not
# n/a). The same from a trace of the serve. And the 8 pm peak incident
# written as a HAR (tests/data/import/peak.har) imports into a scenario
# whose answers are the HAR's bodies, that fails the incident's
# double-email agent (tool_integrity, side_effects) and passes a fixed one.
. "$(dirname "$0")/lib.sh"
pids=()
at_exit 'for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p"; done'
need_fusebox
need_cmd awk timeout python3
need_node_pkg openai
[ -e /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] ||
  missing "libfaketime (Debian package libfaketime) for exec --warp"
agent="$src/tests/cli/clients/stream_agent.mjs"
email="$src/tests/cli/clients/email_agent.py"

# start NAME CMD...: runs CMD in the background, waits for its "port N"
# line; sets $pid and $port.
start() {
  local name=$1; shift
  "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" &
  pid=$!
  pids+=("$pid")
  port=
  for _ in $(seq 250); do
    port=$(awk '/^port /{print $2}' "$tmp/$name.out" 2>/dev/null)
    [ -n "$port" ] && return 0
    sleep 0.02
  done
  bad "$name printed no port: $(cat "$tmp/$name.err")"
  return 1
}

# stop PID: SIGINT, wait at most 10 s.
stop() {
  kill -INT "$1" 2>/dev/null
  for _ in $(seq 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

# agent_at PORT API OUT: the agent against the server at PORT.
agent_at() {
  OPENAI_BASE_URL="http://127.0.0.1:$1/v1" OPENAI_API_KEY=sk-placeholder \
    FUSEBOX_URL="http://127.0.0.1:$1" timeout 60 node "$agent" --api "$2" --out "$3" \
    > /dev/null 2>> "$tmp/agent.err"
}

# verdict JSON NAME: the status of verdict NAME in an exec --json result.
verdict() {
  python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(next((v["status"] for r in d["results"] for v in r["verdicts"] if v["name"] == sys.argv[2]), "absent"))' "$1" "$2"
}

# replayed LABEL SCENARIO API FIRST: exec the scenario with the agent; what
# it received must be FIRST byte for byte, and the tools judged and held.
replayed() {
  local label=$1 sc=$2 api=$3 first=$4 rc
  timeout 120 "$bin" exec --quiet --json "$tmp/$label.json" "$sc" -- \
    node "$agent" --api "$api" --out "$tmp/$label.replay" > /dev/null 2> "$tmp/$label.exec.err"
  rc=$?
  [ $rc = 0 ] && ok || bad "$label: exec exit $rc: $(tail -3 "$tmp/$label.exec.err")"
  if cmp -s "$first" "$tmp/$label.replay"; then ok; else
    bad "$label: the agent received other bytes on replay:"
    diff "$first" "$tmp/$label.replay" | head -10
  fi
  grep -q '^ran get_weather call_1 ' "$tmp/$label.replay" && ok ||
    bad "$label: the agent did not reach its tool on replay"
  local v
  for v in tool_integrity side_effects; do
    [ "$(verdict "$tmp/$label.json" $v)" = pass ] && ok ||
      bad "$label: $v is $(verdict "$tmp/$label.json" $v), not pass"
  done
}

# ---------------------------------------------- recorded, then replayed
for c in "responses responses_cut_mid_arguments" "chat rerun_after_retried_turn"; do
  read -r api sc <<< "$c"
  start "up-$api" "$bin" serve "$src/scenarios/tools/$sc.lua" --port 0 || continue
  up=$pid uport=$port
  start "rec-$api" "$bin" record --upstream "http://127.0.0.1:$uport" "$tmp/rec-$api.lua" \
    --port 0 --log "$tmp/rec-$api.jsonl" || continue
  rec=$pid
  agent_at "$port" "$api" "$tmp/rec-$api.first" && ok || bad "record $api: the agent failed"
  stop "$rec"
  stop "$up"
  grep -q 'tool_calls = { { id = "call_1", name = "get_weather"' "$tmp/rec-$api.lua" && ok ||
    bad "record $api: the scenario lost the tool call: $(grep -m3 stream "$tmp/rec-$api.lua")"
  grep -q 'drop_after = ' "$tmp/rec-$api.lua" && ok || bad "record $api: the cut stream was lost"
  replayed "record-$api" "$tmp/rec-$api.lua" "$api" "$tmp/rec-$api.first"
done

# ---------------------------------------------- a trace, imported, replayed
start up-trace "$bin" serve "$src/scenarios/tools/rerun_after_retried_turn.lua" --port 0 \
  --trace "$tmp/serve.jsonl" && {
  up=$pid
  agent_at "$port" chat "$tmp/trace.first" && ok || bad "trace: the agent failed"
  stop "$up"
  "$bin" import "$tmp/serve.jsonl" -o "$tmp/trace.lua" 2> "$tmp/import.err" && ok ||
    bad "trace: import failed: $(cat "$tmp/import.err")"
  replayed trace "$tmp/trace.lua" chat "$tmp/trace.first"
}

# ---------------------------------------------- the incident as a HAR
"$bin" import "$src/tests/data/import/peak.har" -o "$tmp/peak.lua" 2> "$tmp/import.err" && ok ||
  bad "peak.har: import failed: $(cat "$tmp/import.err")"
for v in tool_integrity side_effects retry_after_honoured; do
  grep -q "^    $v = true," "$tmp/peak.lua" && ok || bad "peak.har: expect has no $v"
done
! grep -q 'org-abc123\|PEAKSECRET' "$tmp/peak.lua" && ok || bad "peak.har: a secret reached the scenario"
# Retry-After is 30 s: the client runs 20 times faster (libfaketime), the
# server plays at 1/20.
timeout 120 "$bin" exec --quiet --warp 20 --json "$tmp/double.json" "$tmp/peak.lua" -- \
  python3 "$email" --double > /dev/null 2>&1
rc=$?
[ $rc = 1 ] && ok || bad "peak.har: the double-email agent is not failed (exit $rc)"
for v in tool_integrity side_effects; do
  [ "$(verdict "$tmp/double.json" $v)" = fail ] && ok ||
    bad "peak.har: double-email agent: $v is $(verdict "$tmp/double.json" $v), not fail"
done
timeout 120 "$bin" exec --quiet --warp 20 --json "$tmp/fixed.json" "$tmp/peak.lua" -- \
  python3 "$email" --fixed --dump "$tmp/fixed.dump" > /dev/null 2>&1
rc=$?
[ $rc = 0 ] && ok || bad "peak.har: the fixed agent is not passed (exit $rc)"
for v in tool_integrity side_effects retry_after_honoured; do
  [ "$(verdict "$tmp/fixed.json" $v)" = pass ] && ok ||
    bad "peak.har: fixed agent: $v is $(verdict "$tmp/fixed.json" $v), not pass"
done
# What the fixed agent received is what the HAR holds (entries 1-3), but
# for the organisation id, redacted on purpose.
python3 - "$src/tests/data/import/peak.har" > "$tmp/har.bodies" <<'EOF'
import json, sys
for e in json.load(open(sys.argv[1]))["log"]["entries"][:3]:
    b = json.loads(e["response"]["content"]["text"])
    for k in ("id", "created"):
        if k in b:
            b[k] = "X"
    line = json.dumps(b, sort_keys=True, separators=(",", ":"))
    print("%d %s" % (e["response"]["status"], line.replace("org-abc123", "org-[redacted]")))
EOF
if cmp -s "$tmp/har.bodies" "$tmp/fixed.dump"; then ok; else
  bad "peak.har: the replayed bodies are not the HAR's:"
  diff "$tmp/har.bodies" "$tmp/fixed.dump" | head -10
fi
finish
