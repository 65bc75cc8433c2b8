#!/usr/bin/env bash
# Profiles mean what they say: every shipped profile loads and its values
# are valid (fusebox exec --profile does not exit 2); a misspelt key at any
# depth is FILE:LINE of the key itself and exit 2; a bad value is exit 2.
. "$(dirname "$0")/lib.sh"
cd "$src"
need_fusebox
probe() { "$bin" exec --quiet --timeout 5 --profile "$1" scenarios/examples/chat_ok.lua -- true > "$tmp/out" 2> "$tmp/err"; }

for p in profiles/*.lua; do
  probe "$p"; rc=$?
  if [ $rc = 2 ]; then bad "$p does not load: $(grep -v 'exec: scen' "$tmp/err")"; else ok; fi
done
# typo -> the line of the key, exit 2
typo() { # FILE SED-EXPR WANT
  sed "$2" "$1" > "$tmp/typo.lua"
  probe "$tmp/typo.lua"; rc=$?
  if [ $rc = 2 ] && grep -q "$3" "$tmp/err"; then ok; else bad "typo $2: exit $rc, $(cat "$tmp/err")"; fi
}
line() { grep -n "$2" "$1" | head -1 | cut -d: -f1; }
f=profiles/openai-node.lua
typo $f 's/x_should_retry =/x_should_retri =/' "typo.lua:$(line $f x_should_retry): unknown profile key 'x_should_retri' (did you mean 'x_should_retry'?)"
typo $f 's/jitter = "subtract"/jiter = "subtract"/' "typo.lua:$(line $f jitter): unknown profile key 'backoff.jiter'"
typo $f 's/honoured = true/honored = true/' "typo.lua:$(line $f honoured): unknown profile key 'retry_after.honored'"
f=profiles/langchain-openai.lua
typo $f 's/except = /excep = /' "typo.lua:$(line $f except): unknown profile key 'retries\[\].excep'"
typo profiles/openai-node.lua 's/invalid  = "immediate"/invalid = "later"/' "retry_after.invalid: expected backoff, immediate, stop or hang"
typo profiles/openai-node.lua 's/jitter = "subtract"/jitter = "sideways"/' "backoff.jitter: expected none"
finish
