#!/usr/bin/env bash
# The dependency-bump gate of docs/ci.md on a real one (issue 28): openai
# 6.49.0 and 7.59.0 (both pinned in examples/clients/node, the second as
# the alias openai7) are learned from the wire, and diff-policy names
# exactly the Retry-After facts 7.x changed (its retryRequest falls back to
# the backoff for a wait that is not finite, negative or over 60 s), exit 1;
# a version against itself is exit 0.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_node_pkg openai openai7
need_cmd faketime
cd "$src"
c=examples/clients/node/openai_chat.mjs
# learn_both MODE: both versions learned, side by side ("par") or one after
# the other ("seq"), under a small warp (the SDK sleeps its backoff in real
# time); then their diff in $tmp/diff and its exit in rc.
learn_both() {
  "$bin" learn --warp 2 -j 2 --name openai-node --version 6.49.0 -q -o "$tmp/6.lua" \
    -- node "$c" 2> "$tmp/6.err" &
  p6=$!
  [ "$1" = seq ] && wait $p6
  "$bin" learn --warp 2 -j 2 --name openai-node --version 7.59.0 -q -o "$tmp/7.lua" \
    -- env OPENAI_PACKAGE=openai7 node "$c" 2> "$tmp/7.err"
  r7=$?
  wait $p6
  r6=$?
  [ $r6 = 0 ] && [ $r7 = 0 ] || { bad "learn exit $r6 / $r7: $(cat "$tmp/6.err" "$tmp/7.err")"; finish; }
  "$bin" diff-policy --tolerance 0.35 "$tmp/6.lua" "$tmp/7.lua" > "$tmp/diff" 2>&1
  rc=$?
}
# (and one the issue did not know: 7.x bounds a body that is not streamed by
# its timeout, parseResponseWithTimeout; 6.49 clears the timer at the head)
want='Retry-After over 60 s: slept as asked → falls back to backoff
past Retry-After date: retried at once → falls back to backoff
timeout covers: headers → whole
unparsable Retry-After: retried at once → falls back to backoff
zero or negative Retry-After: retried at once → falls back to backoff'
want=$(printf '%s\n' "$want" | sort)
learn_both par
got=$(grep ' → ' "$tmp/diff" | sort)
# A loaded machine (the suite runs -j2) can stretch the five backoff gaps
# learn reads, or a retry at once: another difference is learned again, one
# version at a time, and must show again to count (a real change does).
if [ "$got" != "$want" ]; then
  echo "learn_bump: differed in $(grep ' → ' "$tmp/diff" | tr '\n' ';'); learning again, one at a time" >&2
  learn_both seq
  got=$(grep ' → ' "$tmp/diff" | sort)
fi
[ $rc = 1 ] && [ "$got" = "$want" ] && ok \
  || bad "diff-policy exit $rc named: $(cat "$tmp/diff"); 6.49: $(grep -v -- '--' "$tmp/6.lua"); 7.59: $(grep -v -- '--' "$tmp/7.lua")"
"$bin" diff-policy --tolerance 0.35 "$tmp/6.lua" "$tmp/6.lua" > /dev/null 2>&1 && ok || bad "a profile differs from itself"
# the learned 6.49 agrees with the hand-written one on what changed
"$bin" diff-policy --tolerance 0.35 profiles/openai-node.lua "$tmp/6.lua" > "$tmp/hand" 2>&1
grep -q "Retry-After" "$tmp/hand" && bad "learned 6.49 differs from profiles/openai-node.lua on Retry-After: $(cat "$tmp/hand")" || ok
finish
