#!/usr/bin/env bash
# serve --time-scale F: time runs F times as fast for any client, so every
# wait the server advises on the wire is F times the scenario's (issue 24):
# Retry-After in seconds and as a date, retry-after-ms, Gemini's retryDelay,
# the rate limiter's Retry-After; the trace keeps the scenario's values (the
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

start() { # time scale
  : > "$tmp/out"
  "$bin" serve "$tmp/s.lua" --port 0 --time-scale "$1" --trace "$tmp/t$1.jsonl" > "$tmp/out" 2> "$tmp/err" &
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
finish
