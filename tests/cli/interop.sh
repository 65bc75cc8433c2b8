#!/usr/bin/env bash
# Real clients judged by fusebox exec: openai-node, the Anthropic SDK, a Python
# httpx+tenacity wrapper, curl --retry, the Vercel AI SDK (`ai` 6 with
# @ai-sdk/openai) and LangChain JS (@langchain/openai), each over
# examples/interop/ (the two without an effect call with --without effects:
# the effect scenario is reported skipped). For every client x scenario this
# pins what the client really does -- the scenario's status (pass, fail, n/a),
# requests that reached the provider, its exit status, the verdicts it fails
# (e.g. both SDKs retry a quota 429; every client but curl sends a lost side
# effect twice; curl exits 52 on a dropped connection a retry survives:
# `outcome`) and the verdicts that did not apply -- in
# tests/cli/interop/<client>.txt. Found by running
# the clients (examples/interop/FINDINGS.md), not from their docs. Each client
# is also judged against its own profile (profiles/<client>.lua): the
# `profile` verdict fails where a client does not do what it promises (a
# client without a profile in profiles/ yet is judged on best practice only).
#   UPDATE=1 bash tests/cli/interop.sh   rewrites the pinned tables.
set -uo pipefail
src=${FUSEBOX_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${FUSEBOX_BIN:-$src/build/fusebox}
cd "$src"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
clients="openai-node anthropic-sdk python-tenacity curl-retry ai-sdk langchain-js"
# Three clients play at once, each on its own ports (six at once load a
# shared 2-core machine enough to shift the timing verdicts): about 4 min.
n=0
for c in $clients; do
  opts=
  prof=profiles/$c.lua
  case $c in ai-sdk) prof=profiles/vercel-ai-sdk.lua ;; langchain-js) prof=profiles/langchain-openai.lua ;; esac
  [ -f "$prof" ] && opts="--profile $prof"
  case $c in ai-sdk|langchain-js) opts="$opts --without effects" ;; esac
  # LangChain backs off a persistent 503 with random waits (1-2 s, 2-4 s,
  # ...) and is killed while still retrying: how many requests it sent
  # before the kill is not pinned (interop_summary.py).
  timeout=30
  # shellcheck disable=SC2086
  "$bin" exec --quiet --timeout $timeout $opts --json "$tmp/$c.json" --trace-dir "$tmp/$c" examples/interop \
    -- sh examples/interop/client.sh "$c" > "$tmp/$c.log" 2>&1 &
  n=$((n + 1))
  [ $((n % 3)) = 0 ] && wait
done
wait
pass=0 fail=0
for c in $clients; do
  if [ ! -s "$tmp/$c.json" ]; then
    echo "FAIL: $c produced no report"; tail -5 "$tmp/$c.log"; fail=$((fail + 1)); continue
  fi
  python3 tests/cli/interop_summary.py "$tmp/$c.json" > "$tmp/$c.txt"
  pinned=tests/cli/interop/$c.txt
  if [ "${UPDATE:-0}" = 1 ]; then
    cp "$tmp/$c.txt" "$pinned"; echo "updated $pinned"; pass=$((pass + 1))
  elif diff -u "$pinned" "$tmp/$c.txt"; then
    echo "ok: $c behaves as pinned ($(wc -l < "$pinned") scenarios)"; pass=$((pass + 1))
  else
    echo "FAIL: $c behaved differently from $pinned (diff above)"; fail=$((fail + 1))
  fi
done
# A profile that does not fit fails: the Python wrapper retries a 401, which
# openai-node's profile says never happens.
"$bin" exec --quiet --timeout 30 --profile profiles/openai-node.lua --json "$tmp/cross.json" \
  examples/interop/fail_401.lua -- sh examples/interop/client.sh python-tenacity > /dev/null 2>&1
rc=$?
if [ $rc = 1 ] && python3 tests/cli/interop_summary.py "$tmp/cross.json" | grep -q 'profile'; then
  echo "ok: the Python wrapper does not conform to openai-node's profile"; pass=$((pass + 1))
else
  echo "FAIL: a mismatched profile was not reported (exit $rc)"; fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
