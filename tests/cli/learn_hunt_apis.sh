#!/usr/bin/env bash
# learn --api and hunt --api on the APIs the guard speaks beyond openai's
# (bedrock, ollama, cohere): learn finds the guard's policy there as on
# openai, its probes called that API's path, and hunt finds in naive on
# each what it finds on openai. Ollama's and Cohere's error bodies carry a
# message only ({"error":"..."}, {"message":"..."}), no code: a quota 429
# is a plain 429 there, so the one fact that differs is that 429s are
# retried without the insufficient_quota exception (which also shows that
# their probes were played on those APIs; learn keeps no traces, so hunt's
# trace is where the path is checked).
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json
cd "$src"
apis="openai bedrock ollama cohere"

# the four side by side: probes mostly wait. Seed 4: the guard's jitter
# draws (seeded) put each gap after a bad Retry-After well clear of the
# threshold that tells "at once" from a backoff, which seed 1's 0.06 s does
# not on a loaded machine.
pids=()
for a in $apis; do
  "$bin" learn --client guard --api "$a" --seed 4 --time-scale 0.2 -q -o "$tmp/$a.lua" 2> "$tmp/$a.err" &
  pids+=($!)
done
i=0
for a in $apis; do
  wait "${pids[$i]}" && ok || bad "learn --api $a: $(cat "$tmp/$a.err")"
  i=$((i + 1))
done
# the facts diff-policy finds changed from openai's profile (OLD NEW)
facts() { "$bin" diff-policy --tolerance 0.35 "$1" "$2" | grep ' → ' | sed 's/: .*//' | sort | tr '\n' ';'; }
want() { case $1 in bedrock) echo "API called;" ;; *) echo "API called;status 429;" ;; esac; }
# A timing fact (what the attempt timeout covers, at once or backoff) can
# read otherwise on a loaded machine: an API whose facts differ is learned
# again, with openai, two at a time, and must agree then. A real
# difference is there both times.
for a in bedrock ollama cohere; do
  got=$(facts "$tmp/openai.lua" "$tmp/$a.lua")
  if [ "$got" != "$(want $a)" ]; then
    for b in openai $a; do
      "$bin" learn --client guard --api "$b" --seed 4 --time-scale 0.2 -q -o "$tmp/again-$b.lua" 2> /dev/null &
    done
    wait
    got="$got then $(facts "$tmp/again-openai.lua" "$tmp/again-$a.lua")"
    [ "${got##* then }" = "$(want $a)" ] && got=$(want $a)
  fi
  [ "$got" = "$(want $a)" ] && ok || bad "$a learned as other facts than openai: $got"
done
for a in ollama cohere; do
  grep -q 'retries = { 408, 409, 429, 500,' "$tmp/$a.lua" && ok || bad "$a: 429 not retried: $(grep retries "$tmp/$a.lua")"
done
# hunt: the same finding in naive on each API, its scenario on that API
field() { python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
for a in $apis; do
  "$bin" hunt --client naive --seed 1 --api "$a" --out "$tmp/h-$a" -q
  [ $? = 1 ] && ok || bad "hunt --api $a: no finding"
done
want=$(field "$tmp/h-openai/hunt.json" "d['findings'][0]['schedule'] + ' ' + d['findings'][0]['verdict']")
[ -n "$want" ] && ok || bad "hunt on openai found nothing to compare"
for a in bedrock ollama cohere; do
  got=$(field "$tmp/h-$a/hunt.json" "d['findings'][0]['schedule'] + ' ' + d['findings'][0]['verdict']")
  [ "$got" = "$want" ] && ok || bad "hunt --api $a found '$got', on openai '$want'"
  grep -q "dialect = \"$a\"" "$tmp/h-$a/finding-1.lua" && ok || bad "hunt --api $a wrote: $(grep client "$tmp/h-$a/finding-1.lua")"
done
grep -q '"path":"/[a-z0-9]*/api/chat"' "$tmp/h-ollama/finding-1.jsonl" && ok || bad "hunt --api ollama's trace: $(head -c 300 "$tmp/h-ollama/finding-1.jsonl")"

# --help names each, and an unknown one is refused with the list
for c in learn hunt; do
  "$bin" $c --help | grep -A1 -- '--api' | tr -d '\n' | grep -q "bedrock, ollama or cohere" && ok || bad "$c --help: $("$bin" $c --help | grep -A1 -- --api)"
  "$bin" $c --client naive --api vertex > "$tmp/bad.out" 2>&1
  [ $? = 2 ] && grep -q "bedrock, ollama or cohere, not 'vertex'" "$tmp/bad.out" && ok || bad "$c --api vertex: $(cat "$tmp/bad.out")"
done
finish
