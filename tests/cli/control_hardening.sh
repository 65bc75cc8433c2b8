#!/usr/bin/env bash
# The control API's limits (issue 29): a token that could never match is
# refused at start; the runs a PUT replaced but that requests still use
# are bounded per session.
. "$(dirname "$0")/lib.sh"
pids=()
at_exit 'for p in "${pids[@]}"; do kill "$p"; done'
need_fusebox
need_cmd curl awk timeout

cat > "$tmp/ok.lua" <<'LUA'
return scenario { name = "ok", provider = { chat { content = "hi" } } }
LUA

# --- item 7: a token of blanks, or with a leading or trailing blank or a
# control character, can never match a header (HTTP trims them): exit 2.
for tok in '   ' ' lead' 'trail ' $'new\nline' $'tab\tin' $'\033[31m'; do
  timeout 5 "$bin" serve "$tmp/ok.lua" --port 0 --control --control-token "$tok" > /dev/null 2> "$tmp/e7"
  rc=$?
  [ $rc = 2 ] && grep -q 'control-token' "$tmp/e7" && grep -q 'visible' "$tmp/e7" && ok \
    || bad "--control-token $(printf '%q' "$tok"): exit $rc, $(head -c 200 "$tmp/e7")"
done
grep -q $'\033' "$tmp/e7" && bad "the refused token was echoed to the terminal" || ok

# --- item 13: an IPv6 literal is bracketed in the URLs serve prints; the
# password of a redis:// URL is never echoed.
timeout 3 "$bin" serve "$tmp/ok.lua" --bind ::1 --port 0 > "$tmp/o13" 2> "$tmp/e13"
if grep -q '^port ' "$tmp/o13"; then
  grep -q 'http://\[::1\]:[0-9]*/v1' "$tmp/o13" && ! grep -q 'http://::1' "$tmp/o13" && ok \
    || bad "IPv6 URLs: $(cat "$tmp/o13")"
else
  echo "note: no IPv6 loopback here ($(head -c 100 "$tmp/e13")): the bracket check is skipped"
fi
timeout 5 "$bin" serve "$tmp/ok.lua" --port 0 --state 'redis://alice:hunter2@127.0.0.1:1' > /dev/null 2> "$tmp/e13"
rc=$?
[ $rc = 2 ] && grep -q 'redacted' "$tmp/e13" && ok || bad "a redis URL with credentials: exit $rc, $(cat "$tmp/e13")"
grep -q hunter2 "$tmp/e13" && bad "the Redis password was echoed: $(cat "$tmp/e13")" || ok

# --- item 6: runs a PUT replaced while requests still use them are bounded:
# at most 4 per session; a PUT beyond that ends the oldest retired run's
# waiting requests (as shutdown), which frees it.
cat > "$tmp/hang.lua" <<'LUA'
local ballast = string.rep("x", 4 << 20) -- what a big scenario holds
return scenario { name = "hang", provider = function(req) return hang {} end }
LUA
"$bin" serve --control --port 0 --trace "$tmp/t6.jsonl" > "$tmp/o6" 2> "$tmp/e6" &
srv=$!
pids+=($srv)
wait_port_line "$tmp/o6"
port=$(awk '/^port /{print $2}' "$tmp/o6")
base="http://127.0.0.1:$port"
cl=()
for i in 1 2 3 4 5 6 7; do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X PUT "$base/__fusebox/scenario" --data-binary @"$tmp/hang.lua")
  [ "$code" = 200 ] || bad "PUT $i: $code"
  curl -s -o /dev/null --max-time 30 "$base/v1/chat/completions" -d "{\"n\":$i}" &
  cl+=($!)
  # its arrival is in before the next PUT retires its run
  for _ in $(seq 250); do [ "$(grep -c '"ev":"arrive"' "$tmp/t6.jsonl" 2>/dev/null)" -ge $i ] && break; sleep 0.02; done
done
# runs 1 and 2 were the oldest of more than 4 retired runs in use: their
# requests end now; runs 3 to 6 (retired) and 7 (current) still hang
ended=
for _ in $(seq 250); do
  ended=$(grep -c '"how":"shutdown"' "$tmp/t6.jsonl")
  [ "$ended" -ge 2 ] && break
  sleep 0.02
done
sleep 0.3
ended=$(grep -c '"how":"shutdown"' "$tmp/t6.jsonl")
[ "$ended" = 2 ] && ok || bad "requests of evicted runs ended as shutdown: $ended, want 2"
for i in 0 1; do kill -0 "${cl[$i]}" 2> /dev/null && bad "the request of run $((i + 1)) still hangs" || ok; done
for i in 2 3 4 5 6; do kill -0 "${cl[$i]}" 2> /dev/null && ok || bad "the request of run $((i + 1)) ended"; done
kill -INT $srv; wait $srv
for p in "${cl[@]}"; do wait "$p"; done

finish
