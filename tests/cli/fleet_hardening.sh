#!/usr/bin/env bash
# The fleet's state in Redis, hardened (issue 29): long Idempotency-Keys,
# requests that fail for want of Redis, a Redis restart, session names,
# effects scoped by name. A real redis-server on a free loopback port, as
# tests/cli/fleet_redis.sh starts it.
. "$(dirname "$0")/lib.sh"
pids=()
at_exit 'for p in "${pids[@]}"; do kill "$p"; done; wait'
need_fusebox
need_cmd redis-server redis-cli curl awk
need_python json

rport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis_pid=
start_redis() {
  redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no \
    --enable-debug-command local --daemonize no > "$tmp/redis.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  for _ in $(seq 100); do
    redis-cli -p "$rport" ping > /dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "redis-server did not start:"; cat "$tmp/redis.log"; exit 1
}
stop_redis() { kill "$redis_pid"; wait "$redis_pid" 2>/dev/null; }
start_redis
state="redis://127.0.0.1:$rport"

# post PORT PATH BODY [HEADER]: prints the status; body in $tmp/body, headers in $tmp/hdr.
post() {
  curl -s -o "$tmp/body" -D "$tmp/hdr" -w '%{http_code}' --max-time 8 \
    "http://127.0.0.1:$1$2" -H 'Content-Type: application/json' ${4:+-H "$4"} -d "$3"
}
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$tmp/body" "$1"; }

cat > "$tmp/eff.lua" <<'LUA'
return scenario { name = "fleet hardening", provider = { chat { content = "ok" } } }
LUA

# --- item 2: two long Idempotency-Keys sharing a prefix are two effects, in
# Redis as in process (the key name was cut at 640 bytes).
long=$(printf 'k%.0s' $(seq 790))
serve_named local "$tmp/eff.lua"
serve_named ra "$tmp/eff.lua" --state "$state" --session skeys --new-session
for n in local ra; do
  p=$(eval echo "\$port_$n")
  s1=$(post "$p" /v1/effects/send_email '{"to":"a"}' "Idempotency-Key: ${long}-A"); r1=$(field 'd["result"]["id"], d.get("replayed", False)')
  s2=$(post "$p" /v1/effects/send_email '{"to":"a"}' "Idempotency-Key: ${long}-B"); r2=$(field 'd["result"]["id"], d.get("replayed", False)')
  s3=$(post "$p" /v1/effects/send_email '{"to":"a"}' "Idempotency-Key: ${long}-B"); r3=$(field 'd.get("replayed", False)')
  [ "$s1 $s2" = "200 200" ] && [ "$r1" = "('eff_1', False)" ] && [ "$r2" = "('eff_2', False)" ] && ok \
    || bad "$n: two 792-byte keys sharing a prefix: $s1 $r1, $s2 $r2 (want two applied effects)"
  [ "$s3 $r3" = "200 True" ] && ok || bad "$n: the second long key again: $s3 $r3, want a replay"
  g=$(curl -s -o "$tmp/body" -w '%{http_code}' "http://127.0.0.1:$p/v1/effects/${long}-B")
  [ "$g" = 200 ] && [ "$(field 'd["result"]["id"]')" = eff_2 ] && ok || bad "$n: lookup of the long key: $g $(cat "$tmp/body")"
  # attempts: two long keys are two logical requests, each at attempt 1
  post "$p" /v1/chat/completions '{"m":1}' "Idempotency-Key: ${long}-C" > /dev/null
  post "$p" /v1/chat/completions '{"m":1}' "Idempotency-Key: ${long}-D" > /dev/null
  stop_named "$n"
  att=$(grep '"ev":"arrive"' "$tmp/$n.jsonl" | grep '/v1/chat' | grep -o '"attempt":[0-9]*' | tr '\n' ' ')
  [ "$att" = '"attempt":1 "attempt":1 ' ] && ok || bad "$n: attempts of two long keys: $att"
done
[ "$(redis-cli -p "$rport" --scan --pattern 'fusebox:skeys:*' | awk '{ if (length($0) > m) m = length($0) } END { print (m < 320) }')" = 1 ] \
  && ok || bad "a Redis key name is longer than 320 bytes"

# --- item 3: a request that fails for want of Redis (a Redis busy for 4 s,
# longer than the 2 s command timeout) is not counted: the client's next
# try is attempt 2, not 3; an effect whose ledger call timed out (its
# arrival counted, then a 1.5 s delay, then Redis asleep) was not applied.
# attempts NAME...: the attempt numbers of the arrivals with key "idem:slow".
attempts() { cat "$@" | grep '"ev":"arrive"' | grep '"key":"idem:slow"' | grep -o '"attempt":[1-9][0-9]*' | cut -d: -f2 | sort | tr '\n' ' '; }
cat > "$tmp/slow.lua" <<'LUA'
return scenario {
  name = "a slow Redis",
  provider = { fail { status = 503 }, fail { status = 503 }, chat { content = "back again" } },
  effects = { delay { 1.5, effect { apply = true } }, effect { apply = true } },
}
LUA
serve_named a "$tmp/slow.lua" --state "$state" --session sslow --new-session --instance a
serve_named b "$tmp/slow.lua" --state "$state" --session sslow --instance b
q='{"model":"m","messages":[{"role":"user","content":"slow"}]}'
# every connection of both pools made (and its scripts loaded) first, so
# that the calls below are sent while Redis sleeps
for i in 1 2 3 4 5 6; do
  post "$port_a" /v1/chat/completions "{\"w\":$i}" > /dev/null; post "$port_b" /v1/chat/completions "{\"w\":$i}" > /dev/null
done
s1=$(post "$port_a" /v1/chat/completions "$q" 'Idempotency-Key: slow')
curl -s -o /dev/null -w '%{http_code}' --max-time 8 "http://127.0.0.1:$port_a/v1/effects/charge_card" \
  -H 'Idempotency-Key: slow-eff' -d '{"n":1}' > "$tmp/e2" &
c3=$!
sleep 0.3 # the effect's arrival is counted; its ledger call (at 1.5 s) comes in Redis's sleep
redis-cli -p "$rport" DEBUG SLEEP 4 > /dev/null &
dbg=$!
# until Redis is asleep: a PING gets no answer in 0.4 s
for _ in $(seq 50); do timeout 0.4 redis-cli -p "$rport" PING > /dev/null 2>&1 || break; done
s2=$(post "$port_b" /v1/chat/completions "$q" 'Idempotency-Key: slow')
grep -qi '^x-fusebox-error: state_unavailable' "$tmp/hdr" && ok || bad "a Redis asleep: no state_unavailable"
wait "$c3" "$dbg"
e2=$(cat "$tmp/e2")
s3=$(post "$port_a" /v1/chat/completions "$q" 'Idempotency-Key: slow')
e3=$(post "$port_b" /v1/effects/charge_card '{"n":1}' 'Idempotency-Key: slow-eff'); r3=$(field 'd.get("replayed", False)')
stop_named a; stop_named b
[ "$s1 $s2 $s3" = "503 500 503" ] && ok || bad "503, then 500 while Redis sleeps, then 503: got $s1 $s2 $s3"
[ "$(attempts "$tmp/a.jsonl" "$tmp/b.jsonl")" = "1 2 " ] && ok \
  || bad "the attempt answered 500 was counted: attempts $(attempts "$tmp/a.jsonl" "$tmp/b.jsonl")(want 1 2)"
[ "$e2 $e3 $r3" = "500 200 False" ] && ok \
  || bad "an effect answered 500 while Redis slept was applied: $e2, then $e3 replayed $r3 (want 500, then 200 replayed False)"

# --- item 4: after a Redis restart on the same port, the first requests
# succeed: a call on a connection Redis closed is sent again, once, on a
# fresh one (it was a 500 for each of the pool's four connections).
serve_named a "$tmp/eff.lua" --state "$state" --session srestart --new-session --instance a
for i in 1 2 3 4 5 6 7 8; do post "$port_a" /v1/chat/completions "{\"warm\":$i}" > /dev/null; done
stop_redis
start_redis
got=
for i in 1 2 3 4 5; do got="$got$(post "$port_a" /v1/chat/completions "{\"after\":$i}") "; done
[ "$got" = "200 200 200 200 200 " ] && ok || bad "5 requests right after a Redis restart: $got(want 200 each)"
e=$(post "$port_a" /v1/effects/send_email '{"to":"x"}' 'Idempotency-Key: after-restart')
[ "$e" = 200 ] && ok || bad "an effect right after the restart: $e"
stop_named a

# --- item 5: a fleet session name is 1 to 64 of [A-Za-z0-9._-]: a newline,
# an ESC, ':' (one session's keys inside another's) or '*' is refused at
# start (exit 2, the charset named), and nothing reaches Redis.
redis-cli -p "$rport" FLUSHALL > /dev/null
for name in 'a:b' $'a\nb' $'a\033[31mb' 'a*' '' "$(printf 'x%.0s' $(seq 65))"; do
  timeout 5 "$bin" serve "$tmp/eff.lua" --port 0 --state "$state" --session "$name" > /dev/null 2> "$tmp/e5"
  rc=$?
  [ $rc = 2 ] && grep -q 'A-Z a-z 0-9 . _ -' "$tmp/e5" && ok \
    || bad "--session $(printf '%q' "$name"): exit $rc, $(head -c 200 "$tmp/e5")"
done
[ "$(redis-cli -p "$rport" DBSIZE)" = 0 ] && ok || bad "a refused session name reached Redis: $(redis-cli -p "$rport" --scan | head -3)"
serve_named a "$tmp/eff.lua" --state "$state" --session "Run-1.b_2" --new-session
s=$(post "$port_a" /v1/chat/completions '{"ok":1}')
[ "$s" = 200 ] && ok || bad "a good session name: $s $(head -c 300 "$tmp/body")"
stop_named a

# --- item 10: keyed effects are scoped by effect name: charge_card with
# send_email's key and body is its own effect, in process and in Redis.
serve_named local "$tmp/eff.lua"
serve_named ra "$tmp/eff.lua" --state "$state" --session sscope --new-session
for n in local ra; do
  p=$(eval echo "\$port_$n")
  a=$(post "$p" /v1/effects/send_email '{"x":1}' 'Idempotency-Key: op-9'); ra=$(field 'd["result"]["name"], d.get("replayed", False)')
  b=$(post "$p" /v1/effects/charge_card '{"x":1}' 'Idempotency-Key: op-9'); rb=$(field 'd["result"]["name"], d.get("replayed", False)')
  c=$(post "$p" /v1/effects/send_email '{"x":1}' 'Idempotency-Key: op-9'); rc_=$(field 'd["result"]["name"], d.get("replayed", False)')
  [ "$a $ra" = "200 ('send_email', False)" ] && ok || bad "$n: send_email: $a $ra"
  [ "$b $rb" = "200 ('charge_card', False)" ] && ok || bad "$n: charge_card with send_email's key and body: $b $rb (want its own effect)"
  [ "$c $rc_" = "200 ('send_email', True)" ] && ok || bad "$n: send_email again: $c $rc_ (want a replay)"
  g=$(curl -s -o "$tmp/body" -w '%{http_code}' "http://127.0.0.1:$p/v1/effects/op-9")
  [ "$g" = 200 ] && [ "$(field 'd["applied"]')" = True ] && ok || bad "$n: lookup of op-9: $g $(cat "$tmp/body")"
  stop_named "$n"
done

finish
