#!/usr/bin/env bash
# The `answer` verdict end to end, with small clients of our own run by
# fusebox exec (tests/cli/clients/answer_client.py):
#   - a lenient stream reader that keeps the text before an in-band error
#     event fails `answer` on each of the four APIs (OpenAI chat, Anthropic,
#     Responses, Gemini); a strict reader that retries passes;
#   - a client that posts once, ignores the 503 / drop / hang / garbage /
#     429 and prints a canned answer with exit 0 fails ("no attempt
#     completed"); the same client with retries passes;
#   - a client that prints the text of the first, cut stream fails, naming
#     attempt 1.
# The error-event cases need the server's end.state (or end.error_event):
# a build whose traces have neither cannot tell an error event from a
# complete stream, and those four cases say SKIP instead of passing.
. "$(dirname "$0")/lib.sh"
cd "$src"
need_fusebox
need_python json http.client
client="python3 tests/cli/clients/answer_client.py"

# ex NAME SCENARIO API MODE: exec one scenario with one client mode.
ex() {
  local name=$1 scen=$2; shift 2
  # shellcheck disable=SC2086
  "$bin" exec --quiet --timeout 20 --json "$tmp/$name.json" --trace-dir "$tmp/$name" \
    "scenarios/$scen.lua" -- $client "$@" > "$tmp/$name.out" 2>&1
}

# fields NAME: "STATUS<TAB>SCENARIO-STATUS<TAB>EVIDENCE<TAB>HAS-STATE" of `answer`.
fields() {
  python3 - "$tmp/$1.json" "$tmp/$1" <<'PY'
import glob, json, sys
r = json.load(open(sys.argv[1]))["results"][0]
v = {x["name"]: x for x in r["verdicts"]}.get("answer", {"status": "absent", "evidence": ""})
state = any("state" in e or e.get("error_event")
            for p in glob.glob(sys.argv[2] + "/*.jsonl") for e in map(json.loads, open(p))
            if e.get("ev") == "end")
print("%s\t%s\t%s\t%s" % (v["status"], r["status"], v["evidence"], int(state)))
PY
}

# want NAME STATUS EVIDENCE-SUBSTRING [needs-state]: checks `answer`.
want() {
  local name=$1 status=$2 sub=$3 needs=${4:-}
  local got st scen ev has
  if ! got=$(fields "$name" 2> "$tmp/$name.pyerr"); then
    bad "$name: no report ($(tail -1 "$tmp/$name.out") $(tail -1 "$tmp/$name.pyerr"))"; return
  fi
  IFS=$'\t' read -r st scen ev has <<< "$got"
  if [ -n "$needs" ] && [ "$has" = 0 ]; then
    echo "SKIP: $name: this build's traces have no end.state: an error event looks complete ($st: $ev)"
    return
  fi
  if [ "$st" = "$status" ] && [[ "$ev" == *"$sub"* ]]; then
    ok; echo "ok: $name: answer $st: $ev"
  else
    bad "$name: answer $st (scenario $scen), wanted $status with \"$sub\": $ev"
  fi
  # a strict or retrying client fails nothing else either (the scenario may
  # still be N/A where exec leaves its point, e.g. the deadline, unjudged)
  if [ "$status" = pass ] && [ "$scen" = fail ]; then bad "$name: scenario fails: $(tail -3 "$tmp/$name.out")"; fi
}

# 1. in-band error events, four APIs: lenient fails, strict passes
streams="chat:stream/error_event anthropic:stream/anthropic_overloaded_event
         responses:responses/stream_failed gemini:gemini/stream_error"
for s in $streams; do
  api=${s%%:*} scen=${s#*:}
  ex "lenient-$api" "$scen" "$api" lenient &
  ex "strict-$api" "$scen" "$api" strict &
  wait
done
for s in $streams; do
  api=${s%%:*}
  want "lenient-$api" fail "no attempt completed: 1 attempt ended error event; printed the text of attempt 1, whose stream ended in an error event" needs-state
  want "strict-$api" pass "with the text of attempt 2, which completed"
done

# 2. one post, the failure ignored, a canned answer: fails; with retries: passes
fails="transient/http_503:503 transient/drop_then_ok:drop transient/hang_then_ok:hang
       shape/garbage_html:garbage ratelimit/retry_after_seconds:429"
for f in $fails; do
  scen=${f%%:*} n=$(basename "${f%%:*}")
  ex "canned-$n" "$scen" chat canned &
  ex "retry-$n" "$scen" chat strict &
  wait
done
for f in $fails; do
  n=$(basename "${f%%:*}") word=${f##*:}
  want "canned-$n" fail "exited 0 but no attempt completed: 1 attempt ended $word"
  want "retry-$n" pass "which completed"
done

# 3. the text of the first, cut stream printed after a retry that succeeded
ex first-cut stream/drop_after_chunks chat first-cut
want first-cut fail "printed the text of attempt 1, whose stream was cut after 2 chunks"

finish
