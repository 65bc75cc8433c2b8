#!/usr/bin/env bash
# Under `exec --warp F` the dates fusebox writes are on the client's warped
# clock (libfaketime: the real time at its start, then F times fast), so an
# HTTP-date Retry-After means what it says: openai-node, which honours the
# date, passes retry_after_date.lua at --warp 10 (it failed when dates were
# written on the real clock, which the client's runs ahead of); a client that
# retries at once still fails.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd node
need_node_pkg openai
[ -n "$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null)" ] \
  || missing "needs libfaketime (apt-get install libfaketime)"
cd "$src"
sc=scenarios/ratelimit/retry_after_date.lua

# the good client: openai-node honours an HTTP-date
"$bin" exec --warp 10 --json "$tmp/good.json" "$sc" -- node examples/clients/node/openai_chat.mjs > "$tmp/good.out" 2>&1
rc=$?
[ $rc = 0 ] && ok || { bad "openai-node on $sc at --warp 10: exit $rc"; cat "$tmp/good.out"; }

# a client that retries at once fails it, as in real time
cat > "$tmp/eager.mjs" <<'JS'
const url = process.env.OPENAI_BASE_URL + "/chat/completions";
const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
const post = () => fetch(url, { method: "POST", body, headers: { "content-type": "application/json" } });
const r = await post();
await r.text();
const r2 = await post();
await r2.text();
JS
"$bin" exec --warp 10 "$sc" -- node "$tmp/eager.mjs" > "$tmp/eager.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q 'retry_after_honoured' "$tmp/eager.out" && ok \
  || { bad "a client that retries at once must fail retry_after_honoured (exit $rc)"; cat "$tmp/eager.out"; }
finish
