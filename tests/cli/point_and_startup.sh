#!/usr/bin/env bash
# The point rule and the start-up time under `fusebox exec`, with small
# clients of our own (tests/cli/clients/point_client.py):
#  (a) a client that waits out the 8 s stall of scenarios/stream/stall.lua
#      (deadline 6 s) is never green: N/A with the sentence that would judge
#      it when no deadline is held, FAIL with --deadline scenario, PASS with
#      a generous --deadline 12;
#  (b) a client whose runtime takes longer to load than the scenario's
#      deadline (sleeps 2 s, deadline 1 s) and then behaves well is green,
#      with "started its first request after ..." in its row and evidence,
#      both for an answer and for a correct, instant failure on a 401;
#  (c) a client that sends nothing before --timeout 2 says so, with its
#      start-up time;
#  (d) every scenario of the library declares its point (expect.point, read
#      from the traces the library leaves), and `fusebox check` names a
#      misspelt point with file:line and a suggestion.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json
cd "$src"
pc="python3 tests/cli/clients/point_client.py"

# Two scenarios with a 1 s deadline: an answer, and a 401.
cat > "$tmp/slow_ok.lua" <<'LUA'
return scenario {
  name = "answered at once, 1 s deadline",
  provider = { chat { content = "hello" } },
  client = { deadline = 1, attempts = 1 },
  expect = { point = { "within_deadline" }, outcome = "ok", within_deadline = true },
}
LUA
cat > "$tmp/slow_401.lua" <<'LUA'
return scenario {
  name = "a 401 at once, 1 s deadline",
  provider = { fail { status = 401, code = "invalid_api_key" } },
  client = { deadline = 1, attempts = 3 },
  expect = { point = { "no_retry_after" }, no_retry_after = { 401 },
             outcome = { "degraded", "error" } },
}
LUA

# status FILE.json: the scenario statuses, one per line.
status() { python3 tests/cli/verdicts.py "$1" | cut -f2 | tr '\n' ' ' | sed 's/ $//'; }
# has FILE TEXT: FILE contains TEXT.
has() { grep -qF -- "$2" "$1"; }

# (a) and the slow starts run at once: each mostly waits.
"$bin" exec --timeout 20 --json "$tmp/a0.json" scenarios/stream/stall.lua \
  -- $pc wait-stall > "$tmp/a0.out" 2> "$tmp/a0.err" & p0=$!
"$bin" exec --timeout 20 --deadline scenario --json "$tmp/a1.json" scenarios/stream/stall.lua \
  -- $pc wait-stall > "$tmp/a1.out" 2> "$tmp/a1.err" & p1=$!
"$bin" exec --timeout 20 --deadline 12 --json "$tmp/a2.json" scenarios/stream/stall.lua \
  -- $pc wait-stall > "$tmp/a2.out" 2> "$tmp/a2.err" & p2=$!
"$bin" exec --timeout 20 --deadline scenario --trace-dir "$tmp/b" --json "$tmp/b.json" \
  "$tmp/slow_ok.lua" "$tmp/slow_401.lua" -- $pc slow-start 2 > "$tmp/b.out" 2> "$tmp/b.err" & pb=$!
"$bin" exec --timeout 2 --trace-dir "$tmp/c" --json "$tmp/c.json" "$tmp/slow_ok.lua" \
  -- $pc silent > "$tmp/c.out" 2> "$tmp/c.err" & pcx=$!
wait $p0; rc0=$?; wait $p1; rc1=$?; wait $p2; rc2=$?; wait $pb; rcb=$?; wait $pcx; rcc=$?

# (a) no deadline held: N/A, with the sentence; not a failure of the exit status.
if [ $rc0 = 0 ] && [ "$(status "$tmp/a0.json")" = "n/a" ] && has "$tmp/a0.out" "N/A   A stream goes silent" &&
   has "$tmp/a0.out" "point n/a: not judged: this scenario tests the deadline (within_deadline); pass --deadline scenario"; then
  ok
else
  bad "(a) stall without a deadline: wanted N/A with the sentence, exit 0 (got $rc0)"; cat "$tmp/a0.out"
fi
# (a) the scenario's own deadline held: FAIL on within_deadline.
if [ $rc1 = 1 ] && [ "$(status "$tmp/a1.json")" = "fail" ] &&
   grep -qE "within_deadline: request .* took [0-9]+ ms .*deadline 6000 ms" "$tmp/a1.out"; then
  ok
else
  bad "(a) stall with --deadline scenario: wanted FAIL on within_deadline, exit 1 (got $rc1)"; cat "$tmp/a1.out"
fi
# (a) a deadline of 12 s the 8.5 s wait fits in: judged, green.
if [ $rc2 = 0 ] && [ "$(status "$tmp/a2.json")" = "pass" ]; then
  ok
else
  bad "(a) stall with --deadline 12: wanted PASS (got $rc2)"; cat "$tmp/a2.out"
fi

# (b) a 2 s start-up against a 1 s deadline, then good behaviour: green.
if [ $rcb = 0 ] && [ "$(status "$tmp/b.json")" = "pass pass" ] &&
   [ "$(grep -cE "started its first request after [2-9][0-9]{3} ms" "$tmp/b.out")" = 2 ]; then
  ok
else
  bad "(b) slow start: wanted PASS PASS with the start-up in both rows (got $rcb)"; cat "$tmp/b.out"
fi
if python3 - "$tmp/b.json" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))["results"]
ev = {v["name"]: v["evidence"] for v in r[0]["verdicts"]}
assert "not counted" in ev["within_deadline"] and "started its first request after" in ev["within_deadline"], ev
ev = {v["name"]: v["evidence"] for v in r[1]["verdicts"]}
assert ev["outcome"].startswith("the command exited 1 after") and re.search(r"started its first request after [2-9][0-9]{3} ms", ev["outcome"]), ev
PY
then ok; else bad "(b) the evidence of within_deadline and outcome lacks the start-up"; fi
# (b) the trace has the command's start on the session clock, before the first request.
if python3 - "$tmp/b" <<'PY'
import glob, json, sys
for p in glob.glob(sys.argv[1] + "/*.jsonl"):
    ev = [json.loads(l) for l in open(p) if l.strip()]
    cl = [e for e in ev if e["ev"] == "client"][0]
    first = min(e["t"] for e in ev if e["ev"] == "arrive")
    assert 0 <= cl["started_t"] and 1900 <= first - cl["started_t"] <= 4000, (p, cl, first)
PY
then ok; else bad "(b) started_t missing or not ~2 s before the first arrival"; fi

# (c) nothing sent before --timeout 2: says so, with the start-up time.
if [ $rcc = 1 ] && has "$tmp/c.out" "sent no request in 2" &&
   grep -qE "outcome: the command sent no request before --timeout killed it after 2[0-9]{3} ms" "$tmp/c.out"; then
  ok
else
  bad "(c) silent client: wanted 'sent no request' with the start-up (got $rcc)"; cat "$tmp/c.out"
fi

# (d) every library scenario declares its point.
"$bin" run --client guard --quiet --trace-dir "$tmp/lib" > /dev/null 2>&1
n_lua=$(find scenarios -name '*.lua' | wc -l)
if python3 - "$tmp/lib" "$n_lua" <<'PY'
import glob, json, sys
paths = glob.glob(sys.argv[1] + "/**/*.jsonl", recursive=True)
missing = []
for p in paths:
    s = json.loads(open(p).readline())
    pt = (s.get("expect") or {}).get("point")
    if not (isinstance(pt, list) and pt):
        missing.append(s.get("file") or p)
assert len(paths) == int(sys.argv[2]), "%d traces for %s scenarios" % (len(paths), sys.argv[2])
assert not missing, "no expect.point: " + ", ".join(missing)
PY
then ok; else bad "(d) a library scenario has no expect.point"; fi
sed 's/point = { "within_deadline" }/point = { "within_dedline" }/' scenarios/stream/stall.lua > "$tmp/typo.lua"
"$bin" check "$tmp/typo.lua" > /dev/null 2> "$tmp/typo.err"
if [ $? = 2 ] && grep -qE "typo.lua:[0-9]+: expect.point: unknown verdict 'within_dedline' \(did you mean 'within_deadline'\?\)" "$tmp/typo.err"; then
  ok
else
  bad "(d) check of a misspelt point"; cat "$tmp/typo.err"
fi
finish
