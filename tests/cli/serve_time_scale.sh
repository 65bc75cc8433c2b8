#!/usr/bin/env bash
# serve --time-scale F: time runs F times as fast for any client, so every
# wait the server advises on the wire is F times the scenario's (issue 24):
# Retry-After in seconds and as a date, retry-after-ms, Gemini's retryDelay,
# the rate limiter's Retry-After and reset headers; the trace keeps the scenario's values (the
# verdicts scale them), and at the default scale 1 nothing changes.
. "$(dirname "$0")/lib.sh"
pid=
at_exit '[ -n "$pid" ] && kill "$pid"'
need_fusebox
need_cmd curl awk

cat > "$tmp/s.lua" <<'LUA'
return scenario {
  name = "every Retry-After form",
  provider = function(req)
    local k = req.body and req.body.k or "chat"
    if k == "s" then return fail { status = 429, retry_after = 30 } end
    if k == "ms" then return fail { status = 429, retry_after_ms = 1500 } end
    if k == "date" then return fail { status = 429, retry_after_date = 30 } end
    return chat { content = "hi" }
  end,
}
LUA

start() { # time scale [scenario]
  : > "$tmp/out"
  "$bin" serve "${2:-$tmp/s.lua}" --port 0 --time-scale "$1" --trace "$tmp/t$1.jsonl" > "$tmp/out" 2> "$tmp/err" &
  pid=$!
  wait_port_line "$tmp/out"
  port=$(awk '/^port /{print $2}' "$tmp/out")
  [ -n "$port" ] || { bad "serve printed no port"; cat "$tmp/err"; exit 1; }
}
stop() { kill -INT "$pid"; wait "$pid" 2>/dev/null; pid=; }
req() { # kind [path]
  curl -s -o "$tmp/body" -D "$tmp/hdr" --max-time 3 "http://127.0.0.1:$port${2:-/v1/chat/completions}" \
    -H 'content-type: application/json' -d "{\"k\":\"$1\",\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}"
}

start 0.1
req s; grep -qi '^retry-after: 3\s*$' "$tmp/hdr" && ok || bad "0.1: retry_after 30 sent as: $(grep -i retry-after "$tmp/hdr")"
req ms; grep -qi '^retry-after-ms: 150\s*$' "$tmp/hdr" && ok || bad "0.1: retry_after_ms 1500 sent as: $(grep -i retry-after-ms "$tmp/hdr")"
req date
d=$(grep -i '^retry-after:' "$tmp/hdr" | cut -d' ' -f2- | tr -d '\r')
now=$(date -u +%s); then=$(date -u -d "$d" +%s 2>/dev/null || echo 0)
[ $((then - now)) -ge 1 ] && [ $((then - now)) -le 5 ] && ok || bad "0.1: retry_after_date 30 sent as '$d' ($((then - now)) s ahead, want about 3)"
# Gemini advises its wait in the body.
req s "/v1beta/models/m:generateContent"
grep -q '"retryDelay":"3s"' "$tmp/body" && ok || bad "0.1: Gemini retryDelay: $(cat "$tmp/body")"
stop
grep -q '"retry_after_ms":30000' "$tmp/t0.1.jsonl" && ok || bad "0.1: the trace lost the scenario's 30 s"

start 1
req s; grep -qi '^retry-after: 30\s*$' "$tmp/hdr" && ok || bad "1: retry_after 30 sent as: $(grep -i retry-after "$tmp/hdr")"
stop

# The rate limiter's reset headers: 6 requests a minute, a burst of 1, so
# after one request the bucket is full again in 10 scenario seconds.
for style in openai anthropic; do
  cat > "$tmp/rl_$style.lua" <<LUA
return scenario { name = "reset headers", provider = { chat { content = "hi" } },
  ratelimit = { rpm = 6, burst = 1, style = "$style" } }
LUA
done
for scale in 0.1 1; do
  start $scale "$tmp/rl_openai.lua"
  req chat
  v=$(grep -i '^x-ratelimit-reset-requests:' "$tmp/hdr" | cut -d' ' -f2 | tr -d '\r')
  want=$([ $scale = 1 ] && echo 10s || echo 1s)
  [ "$v" = "$want" ] && ok || bad "$scale: x-ratelimit-reset-requests '$v', want '$want'"
  stop
done
start 0.1 "$tmp/rl_anthropic.lua"
req chat
d=$(grep -i '^anthropic-ratelimit-requests-reset:' "$tmp/hdr" | cut -d' ' -f2 | tr -d '\r')
now=$(date -u +%s); then=$(date -u -d "$d" +%s 2>/dev/null || echo 0)
[ $((then - now)) -ge 0 ] && [ $((then - now)) -le 3 ] && ok \
  || bad "0.1: anthropic-ratelimit-requests-reset '$d' ($((then - now)) s ahead, want about 1, not 10)"
stop
finish
