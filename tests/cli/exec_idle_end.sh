#!/usr/bin/env bash
# exec ends a client that has gone silent for more than twice the scenario's
# deadline (plus 5 s), say one that sleeps a one-day Retry-After, with that
# reason, instead of waiting for --timeout (issue 24). A client that keeps
# to its deadline is not ended; a scenario without a deadline leaves the
# client to --timeout, as before.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd node
[ -n "$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null)" ] \
  || missing "needs libfaketime (apt-get install libfaketime)"
cd "$src"

# CAP: the longest it waits for a Retry-After (seconds; "inf" sleeps any)
cat > "$tmp/client.mjs" <<'JS'
const url = process.env.OPENAI_BASE_URL + "/chat/completions";
const cap = Number(process.argv[2]);
const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] });
const post = () => fetch(url, { method: "POST", body, headers: { "content-type": "application/json" } });
let r = await post();
await r.text();
const ra = Number(r.headers.get("retry-after"));
if (r.status === 429 && ra > cap) { console.error(`Retry-After ${ra} s is over my cap`); process.exit(1); }
await new Promise((res) => setTimeout(res, ra * 1000));
r = await post();
console.log(await r.text());
JS
# field FILE EXPR: EXPR over r (the result) and v (its verdicts by name)
field() {
  python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["results"][0]
v = {x["name"]: x for x in r["verdicts"]}; print(eval(sys.argv[2]))' "$@"
}

# 1. sleeps the day it is told (deadline 8 s, warp 10): ended after about
#    2.1 s of silence, long before --timeout 60
s=$SECONDS
"$bin" exec --warp 10 --timeout 60 --json "$tmp/sleepy.json" scenarios/ratelimit/retry_after_huge.lua \
  -- node "$tmp/client.mjs" inf > "$tmp/sleepy.out" 2>&1
took=$((SECONDS - s))
[ $took -lt 40 ] && ok || bad "a client sleeping a one-day Retry-After was ended after $took s (want well before --timeout 60)"
grep -q "ended early: no request for" "$tmp/sleepy.out" && ok || { bad "no 'ended early' reason"; cat "$tmp/sleepy.out"; }
[ "$(field "$tmp/sleepy.json" '"ended early" in v["outcome"]["evidence"] and v["outcome"]["status"]')" = fail ] \
  && ok || bad "the outcome verdict does not say why: $(field "$tmp/sleepy.json" 'v["outcome"]')"

# 2. caps its wait and gives up at once: exits on its own, not ended
"$bin" exec --warp 10 --timeout 60 --json "$tmp/capped.json" scenarios/ratelimit/retry_after_huge.lua \
  -- node "$tmp/client.mjs" 5 > "$tmp/capped.out" 2>&1
grep -q "ended early" "$tmp/capped.out" && bad "a client that gave up by itself was 'ended early'" || ok
[ "$(field "$tmp/capped.json" 'r["exit_code"]')" = 1 ] && ok || bad "the capped client's own exit: $(field "$tmp/capped.json" 'r["exit_code"]')"

# 3. no deadline in the scenario: --timeout ends it, as before
"$bin" exec --timeout 3 --json "$tmp/nodl.json" tests/cli/data/retry_after_long.lua \
  -- node "$tmp/client.mjs" inf > "$tmp/nodl.out" 2>&1
grep -q "ended early" "$tmp/nodl.out" && bad "ended early without a deadline to measure by" || ok
[ "$(field "$tmp/nodl.json" 'bool(r.get("killed_by_timeout"))')" = True ] && ok || bad "not killed by --timeout: $(cat "$tmp/nodl.out")"
finish
