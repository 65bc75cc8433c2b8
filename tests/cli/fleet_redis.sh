#!/usr/bin/env bash
# A fleet of fusebox servers sharing one Redis (serve --state) acts as one
# provider, tested for real: redis-server on a free loopback port, three
# servers, requests spread over them; then Redis killed mid-run; then nginx
# in front of two servers (docs/fleet-nginx.conf) playing a herd scenario
# whose merged report must equal the verdicts of one server alone.
. "$(dirname "$0")/lib.sh"
pids=()
at_exit 'for p in "${pids[@]}"; do kill "$p"; done; wait'
need_fusebox
need_cmd redis-server nginx curl awk
need_python json urllib.request

# Two free loopback ports, one for Redis and one for nginx (python3 starts
# slowly on a loaded machine: ask once).
read -r rport nport < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
redis_pid=
start_redis() {
  redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize no > "$tmp/redis.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$rport") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "redis-server did not start:"; cat "$tmp/redis.log"; exit 1
}
start_redis
state="redis://127.0.0.1:$rport"

# post PORT PATH BODY [HEADER]: prints the status; body in $tmp/body, headers in $tmp/hdr.
post() {
  curl -s -o "$tmp/body" -D "$tmp/hdr" -w '%{http_code}' --max-time 5 \
    "http://127.0.0.1:$1$2" -H 'Content-Type: application/json' ${4:+-H "$4"} -d "$3"
}

# --- 0. Options: a bad URL, an unreachable Redis, fleet options without --state.
"$bin" serve "$src/scenarios/transient/http_503.lua" --state "http://127.0.0.1:$rport" > /dev/null 2> "$tmp/e0"
[ $? = 2 ] && grep -q "redis://HOST:PORT" "$tmp/e0" && ok || bad "a bad --state URL: $(cat "$tmp/e0")"
"$bin" serve "$src/scenarios/transient/http_503.lua" --state "redis://127.0.0.1:$nport" > /dev/null 2> "$tmp/e0"
[ $? = 2 ] && grep -q "cannot connect to Redis" "$tmp/e0" && ok || bad "an unreachable Redis at start: $(cat "$tmp/e0")"
"$bin" serve "$src/scenarios/transient/http_503.lua" --session x > /dev/null 2> "$tmp/e0"
[ $? = 2 ] && grep -q "need --state" "$tmp/e0" && ok || bad "--session without --state: $(cat "$tmp/e0")"

# --- 1. "503 twice, then answer" on one logical request, over three servers.
for n in a b c; do
  serve_named "$n" "$src/scenarios/transient/http_503.lua" --state "$state" --session s503 --instance "$n" \
    $([ $n = a ] && echo --new-session)
done
body='{"model":"m","messages":[{"role":"user","content":"one logical request"}]}'
# Waits that clearly grow (the scenario expects backoff growth), wide enough
# for a loaded machine.
s1=$(post "$port_a" /v1/chat/completions "$body"); sleep 0.2
s2=$(post "$port_b" /v1/chat/completions "$body"); sleep 2
s3=$(post "$port_c" /v1/chat/completions "$body")
[ "$s1 $s2 $s3" = "503 503 200" ] && ok || bad "503, 503, 200 over three servers: got $s1 $s2 $s3"
grep -q '"content":"back again"' "$tmp/body" && ok || bad "the third attempt was not the answer"
for n in a b c; do stop_named "$n"; done
# The control: the same three servers without --state answer 503 each time.
for n in x y z; do serve_named "$n" "$src/scenarios/transient/http_503.lua"; done
c1=$(post "$port_x" /v1/chat/completions "$body"); c2=$(post "$port_y" /v1/chat/completions "$body")
c3=$(post "$port_z" /v1/chat/completions "$body")
[ "$c1 $c2 $c3" = "503 503 503" ] && ok || bad "without --state each server counts alone: got $c1 $c2 $c3"
for n in x y z; do stop_named "$n"; done
grep -h '"ev":"arrive"' "$tmp/a.jsonl" "$tmp/b.jsonl" "$tmp/c.jsonl" | grep -o '"attempt":[0-9]*' | sort | tr '\n' ' ' \
  | grep -q '"attempt":1 "attempt":2 "attempt":3' && ok || bad "attempt numbers 1, 2, 3 across the traces"
"$bin" report --json "$tmp/m503.json" "$tmp/a.jsonl" "$tmp/b.jsonl" "$tmp/c.jsonl" > "$tmp/rep" 2>&1
rc=$?
[ $rc = 0 ] && ok || { bad "merged report of the 503 fleet: exit $rc"; cat "$tmp/rep"; }
python3 - "$tmp/m503.json" <<'PY' && ok || bad "merged report: one scenario, attempts = 3 passes"
import json, sys
r = json.load(open(sys.argv[1]))
sc = r["results"]
assert len(sc) == 1, len(sc)
v = {x["name"]: x["status"] for x in sc[0]["verdicts"]}
assert v.get("attempts") == "pass", v
PY
# One server's trace alone sees one attempt of three: judged alone it fails.
"$bin" report --quiet "$tmp/a.jsonl" > /dev/null 2>&1
[ $? = 1 ] && ok || bad "one server's trace alone should fail attempts = 3"

# --- 2. A rate limit holds across the fleet: 3 admitted in total, not 3 each.
cat > "$tmp/rl.lua" <<'LUA'
return scenario {
  name = "a fleet-wide rate limit",
  provider = { chat { content = "ok" } },
  ratelimit = { rpm = 6, burst = 3 },
}
LUA
for n in a b c; do
  serve_named "$n" "$tmp/rl.lua" --state "$state" --session srl --instance "$n" $([ $n = a ] && echo --new-session)
done
admitted=0 refused=0
for i in $(seq 12); do
  case $((i % 3)) in 0) p=$port_a ;; 1) p=$port_b ;; *) p=$port_c ;; esac
  s=$(post "$p" /v1/chat/completions "{\"model\":\"m\",\"n\":$i}")
  [ "$s" = 200 ] && admitted=$((admitted + 1))
  [ "$s" = 429 ] && refused=$((refused + 1))
done
[ "$admitted" = 3 ] && [ "$refused" = 9 ] && ok || bad "rate limit burst 3 over three servers: $admitted admitted, $refused refused (want 3, 9)"
grep -qi '^retry-after: ' "$tmp/hdr" && grep -qi '^x-ratelimit-remaining-requests: 0' "$tmp/hdr" && ok \
  || bad "a refused answer carries Retry-After and x-ratelimit-remaining-requests: 0"
for n in a b c; do stop_named "$n"; done

# --- 2b. Retry-After across servers: a 429 from one, the retry on another.
cat > "$tmp/ra.lua" <<'LUA'
return scenario {
  name = "fleet Retry-After",
  provider = { fail { status = 429, retry_after = 1 }, chat { content = "ok" } },
  expect = { attempts = 2, retry_after_honoured = true },
}
LUA
# verdict FILE NAME: the status of verdict NAME in a --json report.
verdict() {
  python3 -c 'import json,sys; print({v["name"]: v["status"] for v in json.load(open(sys.argv[1]))["results"][0]["verdicts"]}.get(sys.argv[2]))' "$1" "$2"
}
for wait in 1.2 0.2; do # a client that waits the Retry-After, one that does not
  for n in a b; do
    serve_named "$n" "$tmp/ra.lua" --state "$state" --session "sra$wait" --instance "$n" $([ $n = a ] && echo --new-session)
  done
  s1=$(post "$port_a" /v1/chat/completions '{"model":"m","q":"ra"}'); sleep "$wait"
  s2=$(post "$port_b" /v1/chat/completions '{"model":"m","q":"ra"}')
  for n in a b; do stop_named "$n"; done
  [ "$s1 $s2" = "429 200" ] && ok || bad "Retry-After over two servers: $s1 $s2"
  "$bin" report --quiet --json "$tmp/ra.json" "$tmp/a.jsonl" "$tmp/b.jsonl" > /dev/null 2>&1
  v=$(verdict "$tmp/ra.json" retry_after_honoured)
  want=pass; [ "$wait" = 0.2 ] && want=fail
  [ "$v" = "$want" ] && ok || bad "retry_after_honoured across servers after ${wait}s: $v, want $want"
done

# --- 3. One effect, one Idempotency-Key, two servers: applied once.
cat > "$tmp/eff.lua" <<'LUA'
return scenario {
  name = "a fleet-wide ledger",
  provider = { chat { content = "ok" } },
  expect = { side_effects = true },
}
LUA
for n in a b; do
  serve_named "$n" "$tmp/eff.lua" --state "$state" --session seff --instance "$n" $([ $n = a ] && echo --new-session)
done
e1=$(post "$port_a" /v1/effects/send_email '{"to":"x"}' 'Idempotency-Key: op-1')
cp "$tmp/body" "$tmp/e1"
e2=$(post "$port_b" /v1/effects/send_email '{"to":"x"}' 'Idempotency-Key: op-1')
[ "$e1 $e2" = "200 200" ] && grep -q '"replayed":true' "$tmp/body" && ok || bad "effect on two servers: $e1 $e2 $(cat "$tmp/body")"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["result"]; b=json.load(open(sys.argv[2]))["result"]; assert a == b, (a, b)' \
  "$tmp/e1" "$tmp/body" && ok || bad "the replay returns the stored result"
e3=$(post "$port_b" /v1/effects/send_email '{"to":"someone else"}' 'Idempotency-Key: op-1')
[ "$e3" = 409 ] && ok || bad "same key, other payload on the other server: $e3, want 409"
g=$(curl -s -o "$tmp/body" -w '%{http_code}' "http://127.0.0.1:$port_a/v1/effects/op-1")
[ "$g" = 200 ] && grep -q '"applied":true' "$tmp/body" && ok || bad "lookup of op-1: $g"
for n in a b; do stop_named "$n"; done
applied=$(cat "$tmp/a.jsonl" "$tmp/b.jsonl" | grep '"ev":"effect"' | grep -c '"action":"applied"')
[ "$applied" = 1 ] && ok || bad "the effect was applied $applied times across the fleet, want 1"
"$bin" report --quiet --json "$tmp/eff.json" "$tmp/a.jsonl" "$tmp/b.jsonl" > /dev/null 2>&1
v=$(verdict "$tmp/eff.json" side_effects)
[ "$v" = pass ] && ok || bad "merged side_effects verdict: $v"

# --- 4. Redis dies mid-run: a marked fusebox error, an invalid run, recovery.
for n in a b; do
  serve_named "$n" "$src/scenarios/transient/http_503.lua" --state "$state" --session skill --instance "$n" \
    $([ $n = a ] && echo --new-session)
done
post "$port_a" /v1/chat/completions '{"model":"m","q":1}' > /dev/null
kill "$redis_pid"; wait "$redis_pid" 2>/dev/null
s=$(post "$port_b" /v1/chat/completions '{"model":"m","q":2}')
[ "$s" = 500 ] && ok || bad "without Redis: status $s, want 500"
grep -qi '^x-fusebox-error: state_unavailable' "$tmp/hdr" && ok || bad "no X-Fusebox-Error header"
grep -q '"type":"fusebox_state_unavailable"' "$tmp/body" && ok || bad "body: $(cat "$tmp/body")"
s=$(post "$port_a" /v1/effects/charge '{"n":1}' 'Idempotency-Key: k9')
[ "$s" = 500 ] && grep -qi '^x-fusebox-error' "$tmp/hdr" && ok || bad "effect without Redis: $s"
start_redis
sleep 0.3 # longer than the reconnect interval (200 ms)
s=$(post "$port_b" /v1/chat/completions '{"model":"m","q":3}')
[ "$s" = 503 ] && ok || bad "after Redis is back: status $s, want 503 (attempt 1 of a fresh key)"
for n in a b; do stop_named "$n"; done
grep -q '"ev":"error".*"kind":"state"' "$tmp/b.jsonl" && ok || bad "no state error in the trace"
"$bin" report "$tmp/a.jsonl" "$tmp/b.jsonl" > "$tmp/rep" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "invalid run, not a client failure" "$tmp/rep" && ok \
  || { bad "report of a fleet that lost Redis: exit $rc (want 2, invalid run)"; cat "$tmp/rep"; }

# --- 5. nginx in front of two servers: a herd, merged, judged as one server.
scale=0.5
# The herd's client: 100 calls over 8 scenario seconds, retry a 429 once
# after a full-jitter wait (base 8 s), as the scenario's client table says. It starts
# (python3 is slow to start on a loaded machine) and says it is ready before
# the servers start, then waits for the go file, so that the session clock
# and the calls line up (the scenario holds first attempts until t = 9 s).
cat > "$tmp/herd.py" <<'PY'
import json, os, sys, threading, time, urllib.request, urllib.error
go, scale = sys.argv[1], float(sys.argv[2])
start = threading.Event()
def call(i):
    start.wait()
    time.sleep(max(0, t0 + i * 8.0 / 100 * scale - time.monotonic()))
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "q%d" % i}]}).encode()
    for attempt in (1, 2):
        req = urllib.request.Request(base + "/v1/chat/completions", body,
                                     {"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=30).read()
            return
        except urllib.error.HTTPError as e:
            e.read()
            if e.code != 429: return
        # Full jitter, drawn evenly (a permutation of 100 slots of 0..8 s)
        # so the verdict does not hang on the luck of one draw.
        time.sleep((i * 37 % 100) / 100.0 * 8 * scale)
ts = [threading.Thread(target=call, args=(i,)) for i in range(100)]
[t.start() for t in ts]
open(go + ".ready", "w").close()
while not os.path.exists(go): time.sleep(0.01)
base = open(go).read().strip()
t0 = time.monotonic() + 0.05
start.set()
[t.join() for t in ts]
PY
herd=$src/scenarios/storm/herd_429_burst.lua
ready() { for _ in $(seq 1200); do [ -e "$1.ready" ] && return; sleep 0.05; done; bad "the herd client never started"; }
# One server, state in process.
python3 "$tmp/herd.py" "$tmp/go1" $scale &
client=$!
ready "$tmp/go1"
serve_named one "$herd" --time-scale $scale
echo "http://127.0.0.1:$port_one" > "$tmp/go1.tmp" && mv "$tmp/go1.tmp" "$tmp/go1"
wait "$client"
stop_named one
# Two servers sharing Redis behind nginx.
python3 "$tmp/herd.py" "$tmp/go2" $scale &
client=$!
ready "$tmp/go2"
mkdir -p "$tmp/nginx"
serve_named a "$herd" --time-scale $scale --state "$state" --session sherd --new-session --instance a
serve_named b "$herd" --time-scale $scale --state "$state" --session sherd --instance b
sed -e "s#@PREFIX@#$tmp/nginx#g" -e "s#@LISTEN@#$nport#g" -e "s#@A@#$port_a#g" -e "s#@B@#$port_b#g" \
  "$src/docs/fleet-nginx.conf" > "$tmp/nginx/nginx.conf"
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" > "$tmp/nginx/out" 2>&1 &
pids+=($!)
for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$nport") 2>/dev/null && break; sleep 0.02; done
echo "http://127.0.0.1:$nport" > "$tmp/go2.tmp" && mv "$tmp/go2.tmp" "$tmp/go2"
wait "$client"
stop_named a
stop_named b
na=$(grep -c '"ev":"arrive"' "$tmp/a.jsonl"); nb=$(grep -c '"ev":"arrive"' "$tmp/b.jsonl")
[ "$na" -gt 20 ] && [ "$nb" -gt 20 ] && ok || bad "nginx spread the herd: $na and $nb arrivals"
"$bin" report --quiet --json "$tmp/h1.json" "$tmp/one.jsonl" > /dev/null 2>&1; rc1=$?
"$bin" report --quiet --json "$tmp/h2.json" "$tmp/a.jsonl" "$tmp/b.jsonl" > /dev/null 2>&1; rc2=$?
[ $rc1 = $rc2 ] && ok || bad "exit status of one server ($rc1) and of the fleet behind nginx ($rc2)"
python3 - "$tmp/h1.json" "$tmp/h2.json" <<'PY' && ok || bad "verdicts of one server and of the merged fleet differ"
import json, sys
def verdicts(p):
    sc = json.load(open(p))["results"]
    assert len(sc) == 1, (p, len(sc))
    for v in sc[0]["verdicts"]: print(p.split("/")[-1], v["name"], v["status"], v["evidence"])
    return {v["name"]: v["status"] for v in sc[0]["verdicts"]}
one, fleet = verdicts(sys.argv[1]), verdicts(sys.argv[2])
print("one server:", one, "\nfleet:     ", fleet)
assert one == fleet
assert one.get("attempts") == "pass", one
PY

finish
