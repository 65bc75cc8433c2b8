#!/usr/bin/env bash
# The composite action (action.yml) on this machine: its two steps are
# scripts/action.sh install and run, called as action.yml calls them (the
# same environment variables); install builds into a temp RUNNER_TEMP and
# appends to GITHUB_PATH; run judges a retrying curl (exit 0, a JUnit file),
# a client that gives up (exit 1), the built-in client on a library name
# (exit 0), and an unknown name (exit 2). action.yml's steps call exactly
# these and pass every input.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd cmake curl pkg-config
export RUNNER_TEMP=$tmp GITHUB_PATH=$tmp/github_path GITHUB_OUTPUT=$tmp/github_output
y=$src/action.yml
grep -q 'bash "$GITHUB_ACTION_PATH/scripts/action.sh" install' "$y" && grep -q 'bash "$GITHUB_ACTION_PATH/scripts/action.sh" run' "$y" && ok || bad "action.yml does not run scripts/action.sh install and run"
for i in scenarios command args junit html; do
  v=FB_$(echo "$i" | tr a-z A-Z)
  grep -q "$v: \${{ inputs.$i }}" "$y" && ok || bad "input $i is not passed as $v"
done

prefix=$(bash "$src/scripts/action.sh" install 2> "$tmp/install.err")
[ $? = 0 ] && [ "$prefix" = "$tmp/fusebox" ] && [ -x "$prefix/bin/fusebox" ] && ok || bad "install: '$prefix': $(tail -3 "$tmp/install.err")"
[ "$(cat "$GITHUB_PATH")" = "$tmp/fusebox/bin" ] && ok || bad "GITHUB_PATH: $(cat "$GITHUB_PATH")"

mkdir -p "$tmp/ws" && cd "$tmp/ws" || exit 1
unset FUSEBOX_HOME FUSEBOX_SCENARIOS
body='{"model":"m","messages":[{"role":"user","content":"hi"}]}'
retry='for i in 1 2 3 4 5 6; do c=$(curl -s -o /dev/null -w "%{http_code}" -X POST -H "content-type: application/json" -d '"'$body'"' "$OPENAI_BASE_URL/chat/completions"); [ "$c" = 200 ] && exit 0; sleep 0.3; done; exit 1'
once='c=$(curl -s -o /dev/null -w "%{http_code}" -X POST -H "content-type: application/json" -d '"'$body'"' "$OPENAI_BASE_URL/chat/completions"); [ "$c" = 200 ]'
FB_PREFIX=$prefix FB_SCENARIOS=transient/http_503 FB_COMMAND=$retry FB_ARGS="--timeout 30" FB_JUNIT=exec.xml \
  bash "$src/scripts/action.sh" run > run1.out 2>&1
rc=$?
[ $rc = 0 ] && grep -q "<testcase" exec.xml && grep -q "<html" fusebox.html && ok || bad "exec, a retrying client: exit $rc: $(tail -3 run1.out)"
FB_PREFIX=$prefix FB_SCENARIOS=transient/http_503 FB_COMMAND=$once FB_JUNIT=exec1.xml \
  GITHUB_STEP_SUMMARY=$tmp/summary.md bash "$src/scripts/action.sh" run > run2.out 2>&1
rc=$?
[ $rc = 1 ] && grep -q "<failure" exec1.xml && ok || bad "exec, a client that gives up: exit $rc, not 1: $(tail -3 run2.out)"
# The job summary names the failed scenario and its failed verdict's evidence.
grep -q '\*\*FAIL\*\*' "$tmp/summary.md" && grep -q '^- \*\*fail\*\* `outcome`' "$tmp/summary.md" && ok || bad "job summary: $(cat "$tmp/summary.md")"
FB_PREFIX=$prefix FB_SCENARIOS=ratelimit/retry_after_seconds bash "$src/scripts/action.sh" run > run3.out 2>&1
rc=$?
[ $rc = 0 ] && [ -s fusebox.xml ] && ok || bad "run, the built-in client: exit $rc: $(tail -3 run3.out)"
FB_PREFIX=$prefix FB_SCENARIOS=ratelimit/nope bash "$src/scripts/action.sh" run > run4.out 2>&1
[ $? = 2 ] && grep -q "no scenario or file named ratelimit/nope" run4.out && ok || bad "an unknown name: $(cat run4.out)"
finish
