#!/usr/bin/env bash
# fusebox hunt against the built-in clients (issue 27): for ten seeds each,
# naive and sdk-default are broken by a schedule found and shrunk to at
# most 3 steps within 200 runs; the shrunk scenario fails the same verdict
# under `fusebox run` and passes with --client guard; the same seed writes
# the same file; the guard is not broken by a small budget; bad input is
# exit 2 with the reason.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json
cd "$src"

# field FILE EXPR: a Python expression over the JSON document d
field() { python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
# verdict REPORT NAME: the status of verdict NAME of the report's scenario
verdict() { field "$1" "[v['status'] for v in d['results'][0]['verdicts'] if v['name'] == '$2'][0]"; }

for client in naive sdk-default; do
  for seed in 1 2 3 4 5 6 7 8 9 10; do
    out="$tmp/$client-$seed"
    "$bin" hunt --client "$client" --seed "$seed" --budget 200 --out "$out" -q
    rc=$?
    [ $rc = 1 ] || { bad "$client seed $seed: exit $rc, want 1 (a finding)"; continue; }
    h="$out/hunt.json"
    runs=$(field "$h" "d['runs']")
    steps=$(field "$h" "d['findings'][0]['steps']")
    v=$(field "$h" "d['findings'][0]['verdict']")
    [ "$runs" -le 200 ] && [ "$steps" -le 3 ] && ok \
      || bad "$client seed $seed: $runs runs, $steps steps (want <= 200, <= 3)"
    [ "$(field "$h" "d['findings'][0]['reference']")" = "guard passes" ] && ok \
      || bad "$client seed $seed: not checked against the guard"
    "$bin" run --client "$client" --time-scale 0.02 --json "$out/own.json" -q "$out/finding-1.lua"
    [ "$(verdict "$out/own.json" "$v")" = fail ] && ok \
      || bad "$client seed $seed: the finding does not fail $v under fusebox run"
    "$bin" run --client guard --time-scale 0.02 --json "$out/guard.json" -q "$out/finding-1.lua"
    [ "$(verdict "$out/guard.json" "$v")" != fail ] && ok \
      || bad "$client seed $seed: the guard fails the finding's $v"
  done
done

# the same seed finds the same schedule and writes the same file, at -j 1 and -j 4
"$bin" hunt --client naive --seed 4 --out "$tmp/again" -q -j 4
cmp -s "$tmp/naive-4/finding-1.lua" "$tmp/again/finding-1.lua" && ok \
  || bad "seed 4 wrote another finding at -j 4: $(diff "$tmp/naive-4/finding-1.lua" "$tmp/again/finding-1.lua")"
[ "$(field "$tmp/again/hunt.json" "d['command']")" = "fusebox hunt --client naive --seed 4 --out $tmp/again -q -j 4" ] \
  && ok || bad "hunt.json has no command to hunt again: $(field "$tmp/again/hunt.json" "d['command']")"
[ "$(field "$tmp/again/hunt.json" "d['findings'][0]['repro']")" = \
  "fusebox run --client naive --time-scale 0.02 $tmp/again/finding-1.lua" ] && ok \
  || bad "hunt.json has no replay command: $(field "$tmp/again/hunt.json" "d['findings'][0]['repro']")"

# without --out the scenario is printed, nothing is written
(cd "$tmp" && "$bin" hunt --client naive --seed 1 > printed.out)
[ $? = 1 ] && grep -q "^return scenario {" "$tmp/printed.out" && ok || bad "no scenario printed: $(head -5 "$tmp/printed.out")"
[ ! -e "$tmp/finding-1.lua" ] && ok || bad "a finding was written without --out"

# --from: a finding is played first, the search starts beside it
"$bin" hunt --client sdk-default --from "$tmp/naive-1/finding-1.lua" --out "$tmp/from" -q
[ $? = 1 ] && [ "$(field "$tmp/from/hunt.json" "d['schedules']")" -ge 1 ] && ok || bad "--from did not hunt"
"$bin" hunt --from scenarios/examples/chat_ok.lua > "$tmp/bad.out" 2>&1
[ $? = 2 ] && grep -q "no '-- schedule:' line" "$tmp/bad.out" && ok || bad "--from a library file: $(cat "$tmp/bad.out")"

# the guard: nothing within a small budget (issue 27: 1,000 runs in the note)
"$bin" hunt --client guard --no-reference --budget 80 --call any -q --json "$tmp/g.json"
rc=$?
[ $rc = 0 ] && ok || bad "the guard was broken (exit $rc)"

# reports: JUnit of the finding
"$bin" hunt --client naive --seed 2 -q --junit "$tmp/h.xml"
grep -q "<testcase" "$tmp/h.xml" && grep -q "<failure" "$tmp/h.xml" && ok || bad "no JUnit failure written"

# bad input: exit 2 with the reason
"$bin" hunt --steps 429,stream_dorp > "$tmp/bad.out" 2>&1
[ $? = 2 ] && grep -q "did you mean 'stream_drop'" "$tmp/bad.out" && ok || bad "bad --steps: $(cat "$tmp/bad.out")"
"$bin" hunt --budget 0 > "$tmp/bad.out" 2>&1
[ $? = 2 ] && ok || bad "--budget 0 accepted"
"$bin" hunt --client gaurd > "$tmp/bad.out" 2>&1
[ $? = 2 ] && ok || bad "--client gaurd accepted"
"$bin" hunt --warp 10 > "$tmp/bad.out" 2>&1
[ $? = 2 ] && grep -q "for a command" "$tmp/bad.out" && ok || bad "--warp with a built-in client: $(cat "$tmp/bad.out")"
# a client that sends nothing is no pass: exit 2, said why
"$bin" hunt --budget 8 -- true > "$tmp/silent.out" 2>&1
[ $? = 2 ] && grep -q "sent no request in any of its 8 runs" "$tmp/silent.out" && ok \
  || bad "a silent client: $(cat "$tmp/silent.out")"
"$bin" hunt --help | grep -q "stream_drop" && ok || bad "--help does not list the steps"
finish
